import Testing
@testable import ActionLedger

/// The one hex codec behind digests, keys and signatures, page tokens, command ids and
/// integrity reports: lowercase out, and only the spellings each format admits in.
@Suite struct HexTests {
    @Test func encodesTwoLowercaseDigitsPerByte() {
        #expect(Hex.encode([UInt8]()) == "")
        #expect(Hex.encode([0x00, 0x0f, 0xf0, 0xff, 0xab, 0x5c]) == "000ff0ffab5c")
        #expect(Hex.encode(UInt64(0)) == "0000000000000000")
        #expect(Hex.encode(UInt64(0x0123_4567_89ab_cdef)) == "0123456789abcdef")
        #expect(Hex.encode(UInt64.max) == "ffffffffffffffff")
    }

    @Test func everyByteRoundTrips() {
        let all = (0...255).map(UInt8.init)
        let text = Hex.encode(all)
        #expect(text.utf8.count == 512)
        #expect(Hex.decode(text) == all)
        #expect(Hex.decode(text.uppercased(), allowingUppercase: true) == all)
    }

    @Test func refusesWhatIsNotHex() {
        #expect(Hex.decode("") == [])
        #expect(Hex.decode("abc") == nil, "odd length")
        #expect(Hex.decode("0g") == nil)
        #expect(Hex.decode("0x12") == nil)
        #expect(Hex.decode(" 12") == nil)
        #expect(Hex.decode("é1") == nil, "a two-byte UTF-8 character is not two digits")
        #expect(Hex.decode("AB") == nil, "uppercase only when allowed")
        #expect(Hex.decode("AB", allowingUppercase: true) == [0xab])
        #expect(Hex.decode("aG", allowingUppercase: true) == nil)
    }

    @Test func digestTakesEitherCaseAndPrintsLowercase() throws {
        let bytes = (0..<32).map { UInt8($0 * 7 + 3) }
        let digest = try #require(Digest(bytes: bytes))
        #expect(digest.hex == Hex.encode(bytes))
        #expect(Digest(hex: digest.hex) == digest)
        #expect(Digest(hex: digest.hex.uppercased()) == digest)
        #expect(Digest(hex: String(digest.hex.dropLast())) == nil)
        #expect(Digest(hex: digest.hex + "00") == nil)
        #expect(Digest(hex: String(digest.hex.dropLast()) + "z") == nil)
        #expect(Digest.zero.hex == String(repeating: "0", count: 64))
    }

    @Test func pageTokensAdmitOnlyWhatAPagePrinted() throws {
        let key: [UInt8] = [0x80, 0, 1, 0x9a, 0xff, 0, 0, 7]
        let printed = PageToken(key).description
        #expect(printed == "8000019aff000007")
        #expect(try PageToken(printed, length: 8) == PageToken(key))
        expectLedgerError(.invalidInput, "wrong length") { try PageToken(printed, length: 9) }
        expectLedgerError(.invalidInput, "uppercase") { try PageToken(printed.uppercased(), length: 8) }
        expectLedgerError(.invalidInput, "odd length") { try PageToken(String(printed.dropLast()), length: 8) }
    }

    @Test func commandIdsAreThirtyTwoLowercaseDigits() throws {
        let id = CommandRequest.newCommandId()
        #expect(id.hasPrefix("cmd-"))
        let digits = String(id.dropFirst(4))
        let bytes = try #require(Hex.decode(digits))
        #expect(bytes.count == 16)
        #expect(Hex.encode(bytes) == digits)
    }
}
