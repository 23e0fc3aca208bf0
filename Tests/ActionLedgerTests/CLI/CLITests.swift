import Foundation
import Testing
@testable import ActionLedger

/// The `ledger` binary as operators use it: real processes on a real LMDB file.
@Suite struct CLITests {
    /// The suite's store and scratch files, removed when the test's suite instance goes.
    let fixture: ProcessFixture
    var dir: URL { fixture.dir }
    var db: String { fixture.db }

    init() throws { fixture = try ProcessFixture("cli") }

    func ledger(_ args: String..., stdin: String? = nil, now: String = "2026-11-22T09:00:00Z") throws -> LedgerProcess.Output {
        try LedgerProcess.run(args + ["--db", db], environment: ["LEDGER_NOW": now], stdin: stdin)
    }

    static let proposalJSON = #"{"action_id":"p1","org":"quinn-co","person":"quinn","specialist":{"name":"Sasha","agent":"content-onlyfans"},"surface":"onlyfans","kind":"publish_post","target":{"type":"feed","id":"of:quinn"},"stakes":"medium","confidence":0.7,"preview":{"text":"New set","assets":3,"price":9.99},"rationale":"peak hour"}"#

    func setUp() throws {
        #expect(try ledger("devices", "link", "iphone", "--person", "quinn", "--org", "quinn-co", "--label", "iPhone", "--platform", "ios").status == 0)
        #expect(try ledger("devices", "link", "laptop", "--person", "quinn", "--label", "MBP", "--platform", "web").status == 0)
        #expect(try ledger("propose", "-", stdin: CLITests.proposalJSON).status == 0)
    }

    @Test func tapsAcrossDevicesShowInTheTrail() throws {
        try setUp()
        let refused = try ledger("approve", "p1", "--device", "laptop", "--json")
        #expect(refused.status == LedgerError.Code.tapsRequired.exitStatus)
        let error = try JSONParser.parse(refused.stdout)
        #expect(error["error"]?["code"] == .string("taps_required"))
        #expect(error["error"]?["next_tap"] == .string("review"))
        #expect(refused.stderr.contains("next tap: review"))
        #expect(try ledger("review", "p1", "--device", "iphone").status == 0)
        #expect(try ledger("approve", "p1", "--device", "laptop", "--command-id", "q1").status == 0)
        let show = try JSONParser.parse(try ledger("show", "p1", "--json").stdout)
        #expect(show["action"]?["state"] == .string("approved"))
        #expect(show["action"]?["next_tap"] == .null)
        guard case .array(let events)? = show["events"] else { Issue.record("no events"); return }
        #expect(events.map { $0["device"] } == [.null, .string("iphone"), .string("laptop")])
        #expect(events.map { $0["type"] } == [.string("action.proposed"), .string("action.reviewed"), .string("action.approved")])
    }

    @Test func aSecondProcessSeesEveryAcknowledgedEventAndMdbStatReadsTheFile() throws {
        try setUp()
        let log = try ledger("log", "--from", "1")
        let lines = log.stdout.split(separator: "\n")
        // store.created (the test clock's record) and the three events of setUp.
        #expect(lines.count == 4)
        #expect(try JSONParser.parse(String(lines[0]))["type"] == .string("store.created"))
        #expect(try JSONParser.parse(String(lines[3]))["seq"] == .number(4))
        let stat = try Child("/usr/bin/mdb_stat", ["-n", "-a", db]).finish(within: 60)
        let text = stat.stdout
        #expect(stat.status == 0 && !stat.signalled, "mdb_stat: \(stat.stderr)")
        #expect(text.contains("Status of events") && text.contains("Entries: 4"))
    }

    @Test func twoProcessesApprovingTheSameActionGiveExactlyOneApproval() throws {
        try setUp()
        #expect(try ledger("review", "p1", "--device", "iphone").status == 0)
        for round in 0..<5 {
            let id = "race-\(round)"
            let json = CLITests.proposalJSON.replacingOccurrences(of: "\"p1\"", with: "\"\(id)\"")
                .replacingOccurrences(of: "\"medium\"", with: "\"low\"").replacingOccurrences(of: "0.7", with: "0.1")
            #expect(try ledger("propose", "-", stdin: json).status == 0)
            let racers = try ["iphone", "laptop"].map { device in
                try LedgerProcess.start(["approve", id, "--device", device, "--db", db], environment: ["LEDGER_NOW": "2026-11-22T09:00:00Z"])
            }
            let statuses = try finishAll(racers, within: 60).map { $0.signalled ? -$0.status : $0.status }
            #expect(statuses.sorted() == [0, LedgerError.Code.alreadyDecided.exitStatus])
            let trail = try JSONParser.parse(try ledger("show", id, "--json").stdout)
            guard case .array(let events)? = trail["events"] else { Issue.record("no events"); return }
            #expect(events.filter { $0["type"] == .string("action.approved") }.count == 1)
        }
    }

    @Test func badInputGetsAStableCodeAndChangesNothing() throws {
        try setUp()
        let before = try Data(contentsOf: URL(fileURLWithPath: db))
        let bad = try ledger("propose", "-", "--json", stdin: #"{"action_id":"x"#)
        #expect(bad.status == LedgerError.Code.invalidInput.exitStatus)
        #expect(try JSONParser.parse(bad.stdout)["error"]?["code"] == .string("invalid_input"))
        let batch = dir.appendingPathComponent("b.jsonl")
        let good = CLITests.proposalJSON.replacingOccurrences(of: "\"p1\"", with: "\"b1\"")
        let wrongType = CLITests.proposalJSON.replacingOccurrences(of: "\"p1\"", with: "\"b2\"").replacingOccurrences(of: "0.7", with: "\"high\"")
        try (good + "\n\n" + wrongType + "\n").write(to: batch, atomically: true, encoding: .utf8)
        let refused = try ledger("propose", "--batch", batch.path)
        #expect(refused.status == LedgerError.Code.invalidInput.exitStatus)
        #expect(refused.stderr.contains("line 3") && refused.stderr.contains("confidence"))
        #expect(try ledger("show", "b1").status == LedgerError.Code.unknownAction.exitStatus)
        #expect(try Data(contentsOf: URL(fileURLWithPath: db)) == before)
    }

    @Test func readOnlyRefusesWritesAndQueriesStillWork() throws {
        try setUp()
        let w = try ledger("review", "p1", "--device", "iphone", "--read-only", "--json")
        #expect(w.status == LedgerError.Code.readOnly.exitStatus)
        #expect(try ledger("show", "p1", "--read-only").status == 0)
        #expect(try ledger("policy", "show", "--read-only", "--json").stdout.contains("\"version\":0"))
    }

    @Test func demoTellsTheDay() throws {
        let out = try ledger("demo")
        #expect(out.status == 0)
        #expect(out.stdout.contains("device_revoked") && out.stdout.contains("already_decided"))
        #expect(out.stdout.contains("proof_required") && out.stdout.contains("taps_required"))
        // Keyed devices under the strict policy: the high approve proven by user verification
        // (signed_uv), an unsigned one refused, authenticated refusals recorded.
        #expect(out.stdout.contains("unsigned (user verification only asserted)") && out.stdout.contains("recorded as tap.refused"))
        let proofs = try JSONParser.parse(try ledger("audit", "proofs", "--json").stdout)
        guard case .number(let uv)? = proofs["by_level"]?["signed_uv"] else { Issue.record("no proof counts"); return }
        #expect(uv >= 1 && proofs["by_level"]?["asserted"] == 0)
        #expect(try ledger("verify", "--deep").status == 0)
        let show = try JSONParser.parse(try ledger("show", "of-05", "--json").stdout)
        guard case .array(let events)? = show["events"] else { Issue.record("no events"); return }
        #expect(events.contains { $0["type"] == .string("action.edited") })
        #expect(try ledger("demo").status == LedgerError.Code.notEmpty.exitStatus)
    }
}
