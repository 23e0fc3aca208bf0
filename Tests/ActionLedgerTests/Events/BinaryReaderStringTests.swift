import Testing
@testable import ActionLedger

/// Strings read back from the store: the ASCII fast path must agree with full UTF-8
/// validation, and invalid UTF-8 is still refused wherever the bad byte sits.
@Suite struct BinaryReaderStringTests {
    func read(_ payload: [UInt8]) throws -> String {
        var w = BinaryWriter(capacity: payload.count + 2)
        w.varint(UInt64(payload.count))
        w.bytes.append(contentsOf: payload)
        return try w.bytes.withUnsafeBytes { b in
            var r = BinaryReader(b)
            return try r.string()
        }
    }

    @Test func asciiDetectionAtEveryPositionAndLength() {
        for length in 0...19 {
            let ascii = [UInt8](repeating: 0x61, count: length)
            #expect(ascii.withUnsafeBytes { BinaryReader.isASCII($0) })
            for position in 0..<length {
                var bytes = ascii
                bytes[position] = 0x80
                #expect(!bytes.withUnsafeBytes { BinaryReader.isASCII($0) }, "length \(length), high byte at \(position)")
            }
        }
    }

    @Test func decodesAsciiAndUnicodeAndRefusesInvalidUTF8() throws {
        #expect(try read(Array("quinn-iphone".utf8)) == "quinn-iphone")
        #expect(try read([]) == "")
        let unicode = "Neue Bilder heute 🌙 — für dich"
        #expect(try read(Array(unicode.utf8)) == unicode)
        // A truncated sequence, a lone continuation byte, a surrogate, an overlong form.
        for bad: [UInt8] in [[0x61, 0xE2, 0x82], [0x80], [0x61, 0x62, 0xED, 0xA0, 0x80], [0xC0, 0xAF],
                             Array("padding-past-eight-bytes".utf8) + [0xFF]] {
            expectLedgerError(.corruptEvent) { try read(bad) }
        }
    }
}
