import Foundation
import Testing
@testable import ActionLedger

/// Issue 11 §1: a projection that cannot fold an event never blocks writes to the log; it
/// is marked `projection_stale`, queries say so naming the seq, and rebuild can run.
@Suite struct ProjectionNeverBlocksTests {
    static func options() -> Ledger.Options {
        var o = Ledger.Options()
        o.projections = ProjectionRegistry(ProjectionRegistry.standard.projections, maxLag: 1)
        return o
    }

    @Test func anUnfoldableEventMarksTheProjectionStaleAndWritesGoOn() throws {
        let t = try TempLedger(options: Self.options()), l = t.ledger!
        try l.link("iphone")
        try l.run(.propose(proposal("a1", stakes: .low, confidence: 0.1)))
        try l.run(.tap(.approve, actionId: "a1", device: "iphone"))
        // A second approval, as a hand-edited store might hold it: Today cannot remove a
        // card that is no longer there.
        let content = proposal("a1").proposal.contentHash
        let bad = Event(seq: 4, at: t0, actor: "quinn", device: "iphone", commandId: "cmd-bad", org: "quinn-co", person: "quinn",
                        actionId: "a1", payload: .approved(Approval(contentHash: content, policyVersion: 0,
                                                                    rule: Policy.Rule.lowOneTap, stakes: .low, userVerified: false)))
        try l.append(verbatim: [(bad, nil)])
        // Writes go on: many events later every command still commits.
        for i in 0..<40 { try l.run(.propose(proposal("n\(i)", stakes: .medium))) }
        #expect(try l.read { try $0.head().seq } == 44)
        // Today is refused, naming the seq; the others still answer.
        let e = expectLedgerError(.projectionStale) { try l.query { try $0.today(TodayQuery(person: "quinn", now: t0)) } }
        #expect(e?.details["seq"] == .number(4))
        let status = try l.query { try $0.statuses() }
        #expect(status.first { $0.name == "today" }?.state == "stale")
        #expect(status.first { $0.name == "today" }?.staleAt == 4)
        #expect(status.filter { $0.name != "today" }.allSatisfy { $0.state == "live" || $0.staleAt != nil })
        // Reopening for writes does not fail on it either, and rebuild of it runs (and names
        // the event it still cannot fold).
        try t.reopen(options: Self.options())
        try t.ledger.run(.propose(proposal("after-reopen")))
        let rebuild = expectLedgerError(.projectionStale) { try t.ledger.rebuild(["today"]) }
        #expect(rebuild?.message.contains("seq 4") == true)
    }
}
