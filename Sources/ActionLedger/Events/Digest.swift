import Crypto

/// A SHA-256 digest held inline (no heap allocation), as the chain hashes millions of them.
public struct Digest: Hashable, Sendable, CustomStringConvertible {
    var w0: UInt64, w1: UInt64, w2: UInt64, w3: UInt64

    /// A digest's length in bytes.
    static let byteCount = 32

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

    /// The digest of exactly 32 bytes; nil otherwise.
    public init?(bytes: [UInt8]) {
        guard let d = bytes.withUnsafeBytes({ Digest(bytes: $0) }) else { return nil }
        self = d
    }

    /// Parses 64 lowercase or uppercase hex digits.
    public init?(hex: String) {
        guard hex.utf8.count == 64, let bytes = Hex.decode(hex, allowingUppercase: true) else { return nil }
        self.init(bytes: bytes)
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

    /// The 32 big-endian bytes.
    public var bytes: [UInt8] { withBytes { Array($0) } }

    /// The 64 lowercase hex digits of the 32 bytes.
    public var hex: String { withBytes { Hex.encode($0) } }

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
