/// Hexadecimal text for bytes: digests, keys and signatures, page tokens, command ids and
/// the keys named in integrity reports. One codec, so every format spells hex alike.
///
/// Output is always lowercase, two digits per byte. Input is lowercase only unless the
/// caller allows uppercase: the key, checkpoint and page-token formats admit one spelling,
/// while a digest typed by a person (`--content-hash`) may be in either case.
public enum Hex {
    private static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Two lowercase digits per byte, in order.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `v` as 16 lowercase digits, most significant first (zero-padded).
    static func encode(_ v: UInt64) -> String {
        withUnsafeBytes(of: v.bigEndian) { encode($0) }
    }

    /// The bytes `text` spells; nil when it has an odd length or a character that is not a
    /// hex digit (an uppercase one counts as such only with `allowingUppercase`).
    static func decode(_ text: String, allowingUppercase: Bool = false) -> [UInt8]? {
        let u = Array(text.utf8)
        guard u.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(u.count / 2)
        var i = 0
        while i < u.count {
            guard let hi = nibble(u[i], allowingUppercase), let lo = nibble(u[i + 1], allowingUppercase) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }

    @inline(__always)
    private static func nibble(_ c: UInt8, _ allowingUppercase: Bool) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x61...0x66: c - 0x61 + 10
        case 0x41...0x46 where allowingUppercase: c - 0x41 + 10
        default: nil
        }
    }
}
