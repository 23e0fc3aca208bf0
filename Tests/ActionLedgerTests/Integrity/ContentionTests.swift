import Foundation
import Testing
@testable import ActionLedger

/// Several processes × several threads race review, approve and dismiss on the same
/// actions: exactly one decision each, no holes, losers told who won, replays append nothing.
@Suite(.serialized) struct ContentionTests {
    static let processes = 4, threads = 4

    @Test func racingProcessesDecideEachActionExactlyOnce() throws {
        let f = try ProcessFixture("contend")
        let actions = (0..<16).map { "race-\($0)" }
        try f.withLedger { l in
            for p in 0..<Self.processes { for t in 0..<Self.threads { try l.link("dev-\(p)-\(t)") } }
            for (i, id) in actions.enumerated() { try l.run(.propose(proposal(id, stakes: i % 2 == 0 ? .low : .medium))) }
        }
        let args = { (p: Int) in ["contend", "--db", f.db, "--process", "\(p)", "--threads", "\(Self.threads)",
                                  "--actions", actions.joined(separator: ","), "--seed", "\(p * 7 + 1)"] }
        let first = try ProcessFixture.collect(try (0..<Self.processes).map { try LedgerProcess.startStress(args($0)) })
        #expect(first.allSatisfy { $0.status == 0 && !$0.signalled }, "\(first.map { "\($0.status) \($0.stderr)" })")
        let lines = try first.flatMap { r in try r.stdout.split(separator: "\n").map { try JSONParser.parse(String($0)) } }
        #expect(lines.count == Self.processes * Self.threads * actions.count * 3)

        let (winners, head) = try f.withLedger { l -> ([String: String], LogHead) in
            #expect(throws: Never.self) { try l.verify(VerifyOptions(deep: true)) }
            var winners: [String: String] = [:]
            for id in actions {
                let events = try l.read { try $0.actionEvents(id) }
                let decisions = events.filter { [.actionApproved, .actionDismissed].contains($0.event.type) }
                #expect(decisions.count == 1, "\(id): \(decisions.count) decisions")
                #expect(events.last?.event.type == decisions.first?.event.type, "\(id): events after its decision")
                winners[id] = decisions.first?.event.device
            }
            return (winners, try l.read { try $0.head() })
        }
        var decidedOk = 0
        for line in lines {
            guard case .string(let id)? = line["action"], case .string(let op)? = line["op"],
                  case .string(let device)? = line["device"] else { Issue.record("bad line \(line)"); continue }
            if line["ok"] == true {
                if op != "review", line["appended"] != 0 {
                    decidedOk += 1
                    #expect(winners[id] == device, "\(id): \(device) was told it decided, the log says \(winners[id] ?? "-")")
                }
            } else if line["code"] == "already_decided" {
                #expect(line["decided_device"] == .string(winners[id] ?? "?"), "\(id): loser told \(line["decided_device"] ?? .null)")
            } else {
                // Review on a low-stakes action, or approve before review at medium stakes.
                #expect(line["code"] == "taps_required", "unexpected refusal \(line)")
            }
        }
        #expect(decidedOk == actions.count)

        // Offline-queue replay: every command again with the same ids appends nothing.
        let replay = try ProcessFixture.collect(try (0..<Self.processes).map { try LedgerProcess.startStress(args($0)) })
        #expect(replay.allSatisfy { $0.status == 0 && !$0.signalled }, "\(replay.map { "\($0.status) \($0.stderr)" })")
        #expect(try f.withLedger { try $0.read { try $0.head() } } == head)
        for r in replay {
            for text in r.stdout.split(separator: "\n") {
                let line = try JSONParser.parse(String(text))
                #expect(line["appended"] == nil || line["appended"] == 0, "replay appended: \(line)")
            }
        }
    }
}
