import Crypto

/// A SHA-256 digest held inline (no heap allocation), as the chain hashes millions of them.
public struct Digest: Hashable, Sendable, CustomStringConvertible {
    var w0: UInt64, w1: UInt64, w2: UInt64, w3: UInt64

    /// All zero bytes: the chain's starting point ("previous hash" of event 1).
    public static let zero = Digest(w0: 0, w1: 0, w2: 0, w3: 0)

    init(w0: UInt64, w1: UInt64, w2: UInt64, w3: UInt64) {
        self.w0 = w0; self.w1 = w1; self.w2 = w2; self.w3 = w3
    }

    /// Reads 32 bytes; nil when `bytes` is not exactly 32 long.
    public init?(bytes: UnsafeRawBufferPointer) {
        guard bytes.count == 32 else { return nil }
        w0 = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
        w1 = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        w2 = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
        w3 = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
    }

    public init?(bytes: [UInt8]) {
        guard let d = bytes.withUnsafeBytes({ Digest(bytes: $0) }) else { return nil }
        self = d
    }

    /// Parses 64 lowercase or uppercase hex digits.
    public init?(hex: String) {
        let u = Array(hex.utf8)
        guard u.count == 64 else { return nil }
        var out = [UInt8](repeating: 0, count: 32)
        for k in 0..<32 {
            guard let hi = Digest.nibble(u[2 * k]), let lo = Digest.nibble(u[2 * k + 1]) else { return nil }
            out[k] = hi << 4 | lo
        }
        self.init(bytes: out)
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x61...0x66: c - 0x61 + 10
        case 0x41...0x46: c - 0x41 + 10
        default: nil
        }
    }

    /// SHA-256 of `data`.
    public static func sha256(_ data: UnsafeRawBufferPointer) -> Digest {
        // update(bufferPointer:) rather than hash(data:), whose DataProtocol path walks regions.
        var h = SHA256()
        h.update(bufferPointer: data)
        return h.finalize().withUnsafeBytes { Digest(bytes: $0)! }
    }

    /// SHA-256 over `prefix` then `data`, without joining them first.
    public static func sha256(_ prefix: Digest, _ data: UnsafeRawBufferPointer) -> Digest {
        var h = SHA256()
        prefix.withBytes { h.update(bufferPointer: $0) }
        h.update(bufferPointer: data)
        return h.finalize().withUnsafeBytes { Digest(bytes: $0)! }
    }

    /// Lends the 32 big-endian bytes.
    public func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var words = (w0.bigEndian, w1.bigEndian, w2.bigEndian, w3.bigEndian)
        return try withUnsafeBytes(of: &words) { try body($0) }
    }

    public var bytes: [UInt8] { withBytes { Array($0) } }

    public var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(64)
        withBytes { for b in $0 { out.append(digits[Int(b >> 4)]); out.append(digits[Int(b & 15)]) } }
        return String(decoding: out, as: UTF8.self)
    }

    public var description: String { hex }

    /// Lane-wise wrapping sum: with ``subtracting(_:)``, a multiset hash of a set of
    /// entries that can be updated one entry at a time (projection state digests).
    public func adding(_ o: Digest) -> Digest {
        Digest(w0: w0 &+ o.w0, w1: w1 &+ o.w1, w2: w2 &+ o.w2, w3: w3 &+ o.w3)
    }

    public func subtracting(_ o: Digest) -> Digest {
        Digest(w0: w0 &- o.w0, w1: w1 &- o.w1, w2: w2 &- o.w2, w3: w3 &- o.w3)
    }
}
