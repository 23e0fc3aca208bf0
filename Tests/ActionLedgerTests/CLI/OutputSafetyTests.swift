import Foundation
import Testing
@testable import ActionLedger

/// Issue 11 §6: what the human output shows an auditor must be what the log holds. Text
/// from specialists (previews, names) can carry newlines and bidi controls; ids cannot.
@Suite struct OutputSafetyTests {
    /// The suite's store and scratch files, removed when the test's suite instance goes.
    let fixture: ProcessFixture
    var dir: URL { fixture.dir }
    var db: String { fixture.db }

    init() throws { fixture = try ProcessFixture("out") }

    func ledger(_ args: String..., stdin: String? = nil) throws -> LedgerProcess.Output {
        try LedgerProcess.run(args + ["--db", db], environment: ["LEDGER_NOW": "2026-11-22T09:00:00Z"], stdin: stdin)
    }

    /// A proposal whose preview draws a fake approval line and whose specialist name
    /// carries a newline and a right-to-left override.
    static func hostile(id: String = "p1") -> String {
        let preview = "hi\\n#9 2026-11-22T09:00:00.000Z action.approved \(id) by quinn on laptop\\u202e\\u2028\\u00a0\\u0085"
        return #"{"action_id":"\#(id)","org":"quinn-co","person":"quinn","specialist":{"name":"Sa\nsha\u202e","agent":"content-onlyfans"},"surface":"onlyfans","kind":"publish_post","target":{"type":"feed","id":"of:quinn"},"stakes":"medium","confidence":0.7,"preview":{"text":"\#(preview)","assets":3,"price":9.99},"rationale":"peak\ttime"}"#
    }

    static let unsafe: [Character] = ["\n", "\r", "\t", "\u{202E}", "\u{2028}", "\u{00A0}", "\u{0085}"]

    /// Every line printed is one of ours: no raw control, bidi or look-alike space, and
    /// no line that starts like an event of the trail except the real ones.
    func expectSafe(_ text: String, realEvents: Int? = nil, _ what: String) {
        for c in Self.unsafe where c != "\n" {
            #expect(!text.contains(c), "\(what): raw U+\(String(c.unicodeScalars.first!.value, radix: 16)) printed")
        }
        if let realEvents {
            let eventLines = text.split(separator: "\n").filter { $0.trimmingCharacters(in: .whitespaces).hasPrefix("#") }
            #expect(eventLines.count == realEvents, "\(what): \(eventLines)")
        }
    }

    @Test func showTodayAuditAndActivityEscapeWhatSpecialistsWrote() throws {
        #expect(try ledger("devices", "link", "iphone", "--person", "quinn", "--org", "quinn-co", "--label", "i\nPhone\u{202E}", "--platform", "ios").status == 0)
        let proposed = try ledger("propose", "-", stdin: Self.hostile())
        #expect(proposed.status == 0)
        expectSafe(proposed.stdout, realEvents: 1, "propose")

        let show = try ledger("show", "p1")
        #expect(show.status == 0)
        expectSafe(show.stdout, realEvents: 1, "show")
        #expect(show.stdout.contains(#""hi\n#9 2026-11-22T09:00:00.000Z action.approved p1 by quinn on laptop\u{202E}\u{2028}\u{A0}\u{85}""#))
        #expect(show.stdout.contains(#"Sa\nsha\u{202E} (content-onlyfans)"#))

        let today = try ledger("today", "--person", "quinn")
        expectSafe(today.stdout, realEvents: 0, "today")
        #expect(today.stdout.contains(#"why now: peak\ttime"#))

        for args in [["audit", "action", "p1"], ["audit", "specialist", "Sa\nsha\u{202E}"], ["audit", "events"],
                     ["activity", "--person", "quinn"]] {
            let out = try LedgerProcess.run(args + ["--db", db], environment: ["LEDGER_NOW": "2026-11-22T09:00:00Z"])
            #expect(out.status == 0, "\(args)")
            expectSafe(out.stdout, "\(args)")
        }

        let devices = try ledger("devices", "list")
        #expect(devices.stdout.split(separator: "\n").count == 1)
        #expect(devices.stdout.contains("i\\nPhone\\u{202E}\tios") || devices.stdout.contains("ios\ti\\nPhone\\u{202E}"))
        expectSafe(devices.stdout.replacingOccurrences(of: "\t", with: " "), "devices list")
    }

    @Test func jsonOutputKeepsTheTextAsWritten() throws {
        #expect(try ledger("propose", "-", stdin: Self.hostile()).status == 0)
        let show = try JSONParser.parse(try ledger("show", "p1", "--json").stdout)
        guard case .string(let text)? = show["action"]?["preview"]?["text"] else {
            Issue.record("no preview text"); return
        }
        #expect(text.hasPrefix("hi\n#9") && text.contains("\u{202E}"))
    }

    @Test func aBackslashIsEscapedSoItCannotForgeAnEscape() throws {
        let json = Self.hostile().replacingOccurrences(of: #""text":"hi\n"#, with: #""text":"a\\nb \\u{202E} "#)
        #expect(try ledger("propose", "-", stdin: json).status == 0)
        let show = try ledger("show", "p1").stdout
        #expect(show.contains(#""a\\nb \\u{202E} #9"#))
    }

    @Test func errorMessagesQuotingInputAreEscapedToo() throws {
        #expect(try ledger("propose", "-", stdin: Self.hostile()).status == 0)
        let refused = try ledger("show", "p1\nerror: nothing wrong")
        #expect(refused.status == LedgerError.Code.unknownAction.exitStatus)
        #expect(refused.stderr.split(separator: "\n").count == 1)
        #expect(refused.stderr.contains(#"p1\nerror: nothing wrong"#))
    }

    /// A store written before the identifier rule keeps being readable; its odd ids print escaped.
    @Test func aLegacyIdStaysReadableAndPrintsEscaped() throws {
        do {
            // The library path takes a ProposalInput as given, as the engine did before the rule.
            let legacy = try Ledger(path: db)
            try legacy.run(.propose(proposal("of\u{00A0}1")))
        }
        let show = try ledger("show", "of\u{00A0}1")
        #expect(show.status == 0)
        #expect(show.stdout.hasPrefix(#"of\u{A0}1: Sasha"#))
        #expect(try ledger("audit", "action", "of\u{00A0}1", "--json").status == 0)
    }
}
