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

    /// A refusal a projection's code raises inside a fold (a tap by a device no one linked,
    /// as damaged bytes could read) is `projection_stale` naming the seq, with the refusal
    /// as `cause` — not the refusal's own code, which would read as a refused command. A
    /// rebuild folds its projections on several threads and reports the failure at the
    /// lowest seq, as `rebuild --verify` (one thread) does.
    @Test func aRefusalInsideAFoldIsReportedAsStaleAtTheLowestSeqByBothRebuilds() throws {
        let t = try TempLedger(), l = t.ledger!
        try l.link("iphone")
        try l.run(.propose(proposal("a1", stakes: .low, confidence: 0.1)))
        try l.run(.tap(.approve, actionId: "a1", device: "iphone"))
        let content = proposal("a1").proposal.contentHash
        try l.run(.propose(proposal("a2")))
        let head = try l.read { try $0.head().seq }
        // At head + 1, a review of a2 by a device never linked (the devices projection
        // refuses it); at head + 2, a second approval of a1 (Today cannot remove it again).
        let ghost = Event(seq: head + 1, at: t0, actor: "quinn", device: "ghost", commandId: "cmd-ghost", org: "quinn-co",
                          person: "quinn", actionId: "a2",
                          payload: .reviewed(Tap(contentHash: proposal("a2").proposal.contentHash, policyVersion: 0)))
        let again = Event(seq: head + 2, at: t0, actor: "quinn", device: "iphone", commandId: "cmd-again", org: "quinn-co",
                          person: "quinn", actionId: "a1",
                          payload: .approved(Approval(contentHash: content, policyVersion: 0, rule: Policy.Rule.lowOneTap,
                                                      stakes: .low, userVerified: false)))
        try l.append(verbatim: [(ghost, nil), (again, nil)])
        for verify in [true, false] {
            let e = expectLedgerError(.projectionStale) { try l.rebuild(options: RebuildOptions(verify: verify)) }
            #expect(e?.details["seq"] == .number(Double(head + 1)), "verify: \(verify)")
            #expect(e?.details["projection"] == .string("devices"), "verify: \(verify)")
            #expect(e?.details["cause"] == .string("unknown_device"), "verify: \(verify)")
        }
        // Today alone fails at its own event.
        let today = expectLedgerError(.projectionStale) { try l.rebuild(["today"]) }
        #expect(today?.details["seq"] == .number(Double(head + 2)))
        #expect(today?.details["cause"] == nil)  // Today's own refusal: no other code to name
    }

    /// Of failures on several threads, the lowest seq wins, and at one seq the projection
    /// asked for first; one naming no seq only when none names one.
    @Test func theEarliestFailureIsTheLowestSeqThenTheFirstProjection() {
        func failure(_ seq: Int?, _ name: String?) -> Result<ShadowBuild.Chunk, any Error> {
            var details: JSONObject = [:]
            if let seq { details["seq"] = .number(Double(seq)) }
            if let name { details["projection"] = .string(name) }
            return .failure(LedgerError(.projectionStale, "\(name ?? "-") \(seq ?? -1)", details: details))
        }
        let order = ["today", "autoshipped", "audit", "devices", "activity"]
        func earliest(_ r: [Result<ShadowBuild.Chunk, any Error>]) -> String? {
            (ShadowBuild.earliestFailure(r, order: order) as? LedgerError)?.message
        }
        #expect(earliest([failure(348, "audit"), failure(309, "devices")]) == "devices 309")
        #expect(earliest([failure(90, "audit"), failure(90, "today")]) == "today 90")
        #expect(earliest([failure(nil, nil), failure(500, "activity")]) == "activity 500")
        #expect(earliest([.success(ShadowBuild.Chunk()), failure(nil, nil)]) == "- -1")
        #expect(earliest([.success(ShadowBuild.Chunk())]) == nil)
    }
}
