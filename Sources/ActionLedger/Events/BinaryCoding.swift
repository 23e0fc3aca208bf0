/// Appends the primitives of the canonical encoding. Every value has exactly one
/// encoding: integers are minimal LEB128 varints or fixed big-endian words, strings are
/// length-prefixed UTF-8, optionals a 0/1 flag.
struct BinaryWriter {
    var bytes: [UInt8] = []

    init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    /// Starts with `count` zero bytes, for a prefix filled in once the rest is written.
    init(reserving count: Int) {
        bytes = [UInt8](repeating: 0, count: count)
        bytes.reserveCapacity(count + 480)  // most events fit: a proposal is a few hundred bytes
    }

    mutating func u8(_ v: UInt8) { bytes.append(v) }

    mutating func fixed64(_ v: UInt64) {
        withUnsafeBytes(of: v.bigEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func varint(_ v: UInt64) {
        var v = v
        while v >= 0x80 {
            bytes.append(UInt8(v & 0x7F) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    mutating func bool(_ v: Bool) { bytes.append(v ? 1 : 0) }

    mutating func string(_ s: String) {
        var s = s
        s.withUTF8 { utf8 in
            varint(UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    mutating func double(_ d: Double) { fixed64(d.bitPattern) }

    mutating func digest(_ d: Digest) { d.withBytes { bytes.append(contentsOf: $0) } }

    mutating func timestamp(_ t: Timestamp) { fixed64(UInt64(bitPattern: t.milliseconds)) }

    mutating func optional<T>(_ v: T?, _ write: (inout BinaryWriter, T) -> Void) {
        if let v {
            u8(1)
            write(&self, v)
        } else {
            u8(0)
        }
    }
}

/// Reads the canonical encoding back, refusing anything a ``BinaryWriter`` could not
/// have produced (non-minimal varints, flags other than 0/1, invalid UTF-8, NaN), so
/// that decoding then re-encoding always gives the same bytes.
struct BinaryReader {
    let buffer: UnsafeRawBufferPointer
    var offset = 0

    init(_ buffer: UnsafeRawBufferPointer) { self.buffer = buffer }

    var isAtEnd: Bool { offset == buffer.count }

    func fail(_ what: String) -> LedgerError {
        LedgerError(.corruptEvent, "\(what) at byte \(offset)")
    }

    mutating func u8() throws -> UInt8 {
        guard offset < buffer.count else { throw fail("truncated") }
        defer { offset += 1 }
        return buffer[offset]
    }

    mutating func fixed64() throws -> UInt64 {
        guard offset + 8 <= buffer.count else { throw fail("truncated") }
        defer { offset += 8 }
        return UInt64(bigEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    mutating func varint() throws -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let b = try u8()
            if shift == 63, b > 1 { throw fail("varint overflow") }
            result |= UInt64(b & 0x7F) << shift
            if b & 0x80 == 0 {
                if b == 0, shift > 0 { throw fail("non-minimal varint") }
                return result
            }
            shift += 7
            if shift > 63 { throw fail("varint overflow") }
        }
    }

    /// A varint that counts something (taps, edits): at most 2⁵³, so that converting it and
    /// counting on from it never trap, whatever a damaged record holds.
    mutating func count() throws -> Int {
        let n = try varint()
        guard n <= 1 << 53 else { throw fail("count out of range") }
        return Int(n)
    }

    mutating func bool() throws -> Bool {
        switch try u8() {
        case 0: return false
        case 1: return true
        default: throw fail("invalid boolean")
        }
    }

    mutating func string() throws -> String {
        let n = try varint()
        guard n <= UInt64(buffer.count - offset) else { throw fail("truncated string") }
        let slice = UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + Int(n)])
        let utf8 = slice.assumingMemoryBound(to: UInt8.self)
        // Ids, names and most texts are ASCII, which is valid UTF-8 as it stands: decode it
        // without `String(validating:)`, whose generic path is costly for every string read.
        let s: String
        if BinaryReader.isASCII(slice) {
            s = String(decoding: utf8, as: UTF8.self)
        } else if let valid = String(validating: utf8, as: UTF8.self) {
            s = valid
        } else {
            throw fail("invalid UTF-8")
        }
        offset += Int(n)
        return s
    }

    /// Whether every byte is below 0x80, eight at a time.
    @inline(__always)
    static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var i = 0, high: UInt64 = 0
        while i + 8 <= bytes.count {
            high |= bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            i += 8
        }
        while i < bytes.count {
            high |= UInt64(bytes[i])
            i += 1
        }
        return high & 0x8080_8080_8080_8080 == 0
    }

    mutating func double() throws -> Double {
        let d = Double(bitPattern: try fixed64())
        guard d.isFinite else { throw fail("non-finite number") }
        return d
    }

    mutating func digest() throws -> Digest {
        guard offset + 32 <= buffer.count else { throw fail("truncated digest") }
        defer { offset += 32 }
        return Digest(bytes: UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + 32]))!
    }

    mutating func timestamp() throws -> Timestamp { Timestamp(milliseconds: Int64(bitPattern: try fixed64())) }

    mutating func optional<T>(_ read: (inout BinaryReader) throws -> T) throws -> T? {
        switch try u8() {
        case 0: return nil
        case 1: return try read(&self)
        default: throw fail("invalid optional flag")
        }
    }
}
