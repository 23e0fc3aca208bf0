import Testing
@testable import ActionLedger

@Suite struct JSONParserTests {
    @Test(arguments: [
        "", "{", "{\"a\":1,}", "[1 2]", "{\"a\" 1}", "01", "1.", "-", "tru", "\"\\x\"", "\"\u{01}\"",
        "{\"a\":1,\"a\":2}", "\"\\ud800\"", "\"\\udc00\"", "NaN", "Infinity", "1e999", "{} {}", "[1]x",
        "1e-400", "-2.5e-999", "0.0001e-330",  // nonzero, yet a double reads them as zero
    ])
    func malformedInputIsRefused(text: String) {
        expectLedgerError(.invalidInput) { try JSONParser.parse(text) }
    }

    @Test func invalidUTF8IsRefused() {
        let error = expectLedgerError(.invalidInput) { try JSONParser.parse([0x22, 0xC3, 0x28, 0x22]) }
        #expect(error?.message.contains("UTF-8") == true)
    }

    @Test func depthAndSizeAreLimited() {
        let deep = String(repeating: "[", count: 40) + String(repeating: "]", count: 40)
        expectLedgerError(.invalidInput) { try JSONParser.parse(deep) }
        let huge = [UInt8](repeating: 0x20, count: JSONParser.maxBytes + 1)
        expectLedgerError(.invalidInput) { try JSONParser.parse(huge) }
    }

    @Test func zeroesAndTinyNumbersKeepTheirValue() throws {
        for zero in ["0", "-0", "0.000e-400", "0e999"] { #expect(try JSONParser.parse(zero) == .number(0), "\(zero)") }
        #expect(try JSONParser.parse("5e-324") == .number(5e-324))  // the least subnormal: not zero, kept
    }

    @Test func valuesParseAndPrintBack() throws {
        let text = #"{"s":"é \"q\" \n \u0001 😀","n":-12.5e-1,"i":42,"b":[true,false,null],"o":{}}"#
        let v = try JSONParser.parse(text)
        #expect(v["s"] == .string("é \"q\" \n \u{01} 😀"))
        #expect(v["n"] == .number(-1.25))
        #expect(try JSONParser.parse(v.serialized()) == v)
        #expect(try JSONParser.parse("\"\\ud83d\\ude00\"") == .string("😀"))
    }

    @Test func errorsNameLineAndColumn() {
        let error = expectLedgerError(.invalidInput) { try JSONParser.parse("{\n  \"a\": tru\n}") }
        #expect(error?.message.contains("line 2") == true)
    }

    @Test func unknownAndMissingProposalFieldsAreNamed() throws {
        var o = JSONObject()
        o["action_id"] = "a1"
        o["org"] = "o"
        o["person"] = "p"
        let missing = expectLedgerError(.invalidInput) { try ProposalInput(json: .object(o)) }
        #expect(missing?.details["field"] == .string("specialist"))
        let full = try JSONParser.parse(#"{"action_id":"a","org":"o","person":"p","specialist":{"name":"Mia","agent":"x"},"surface":"x","kind":"send_reply","target":{"type":"t","id":"1"},"stakes":"low","confidence":0.5,"preview":{"text":"hi","assets":0},"rationale":"","colour":"red"}"#)
        let unknown = expectLedgerError(.invalidInput) { try ProposalInput(json: full) }
        #expect(unknown?.details["field"] == .string("colour"))
    }
}

@Suite struct TimestampTests {
    @Test(arguments: ["1970-01-01T00:00:00.000Z", "2026-11-22T09:15:00.123Z", "2024-02-29T23:59:59.999Z",
                      "1969-12-31T23:59:59.999Z", "2400-03-01T00:00:00.000Z"])
    func formatRoundTrips(text: String) throws {
        let t = try #require(Timestamp(iso8601: text))
        #expect(t.iso8601 == text)
    }

    @Test func offsetsFractionsAndDatesParse() {
        #expect(Timestamp(iso8601: "2026-11-22T10:15:00+01:00") == Timestamp(iso8601: "2026-11-22T09:15:00Z"))
        #expect(Timestamp(iso8601: "2026-11-22T09:15:00.5Z")?.milliseconds == Timestamp(iso8601: "2026-11-22T09:15:00Z")!.milliseconds + 500)
        #expect(Timestamp(iso8601: "2026-11-22") == Timestamp(iso8601: "2026-11-22T00:00:00Z"))
        #expect(Timestamp(milliseconds: 0).utcDay == 0)
        #expect(Timestamp(milliseconds: -1).utcDay == -1)
    }

    @Test(arguments: ["2026-02-30T00:00:00Z", "2026-13-01T00:00:00Z", "2026-11-22T24:00:00Z", "2026-11-22T09:15:00",
                      "2026-11-22T09:15:00.Z", "yesterday", "2026-11-22T09:15:00Zjunk"])
    func invalidTimesAreRefused(text: String) {
        #expect(Timestamp(iso8601: text) == nil)
    }
}
