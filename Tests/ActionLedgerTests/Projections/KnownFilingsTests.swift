import Foundation
import Testing
@testable import ActionLedger

/// The writer's folds file an action's later events under its proposal's specialist and
/// surface, learned from the commands that judged the action (``KnownFilings``) instead of
/// read back from the log. Only a proposal committed before the judging transaction is
/// learned: a filing taken from a transaction that then failed could outlive its action.
@Suite struct KnownFilingsTests {
    private func approve(_ id: String) -> CommandRequest {
        CommandRequest(.tap(.approve, actionId: id, device: "iphone"), now: t0)
    }

    @Test func onlyProposalsCommittedBeforeTheTransactionAreLearned() throws {
        let t = try TempLedger()
        let l = t.ledger!
        try l.link("iphone")
        _ = try l.execute(batch: [CommandRequest(.propose(proposal("old", stakes: .low)), now: t0)])
        let writer = Writer(environment: l.environment, dbs: l.dbs, registry: l.registry)
        defer { writer.stop() }
        // Medium stakes: a review, then an approval.
        let r = try writer.submit([CommandRequest(.propose(proposal("new")), now: t0),
                                   CommandRequest(.tap(.review, actionId: "new", device: "iphone"), now: t0), approve("old")],
                                  atomic: false)
        #expect(r.allSatisfy { (try? $0.get()) != nil })
        #expect(writer.knowsFiling("old"))
        #expect(!writer.knowsFiling("new"), "proposed in the judging transaction")
        #expect((try writer.submit([approve("new")], atomic: false)[0].get()).action?.status == .approved)
        #expect(writer.knowsFiling("new"), "committed before the approval's transaction")
    }

    /// Folds at every commit (maxLag 1) file each approval under its own action's surface,
    /// exactly as a refold of the log does.
    @Test func learnedFilingsFileEachEventUnderItsOwnAction() throws {
        let t = try TempLedger()
        let l = t.ledger!
        try l.link("iphone")
        let ids = (0..<6).map { "a\($0)" }
        _ = try l.execute(batch: ids.enumerated().map { i, id in
            CommandRequest(.propose(proposal(id, stakes: .low, surface: i % 2 == 0 ? "onlyfans" : "x")), now: t0)
        })
        let writer = Writer(environment: l.environment, dbs: l.dbs, registry: ProjectionRegistry(l.registry.projections, maxLag: 1))
        defer { writer.stop() }
        for pair in stride(from: 0, to: ids.count, by: 2) {
            let r = try writer.submit([approve(ids[pair]), approve(ids[pair + 1])], atomic: false)
            #expect(r.allSatisfy { (try? $0.get())?.action?.status == .approved })
        }
        for (surface, parity) in [("onlyfans", 0), ("x", 1)] {
            let listed = try l.query { try $0.audit(.surface(surface)) }.entries
            let mine = ids.enumerated().filter { $0.offset % 2 == parity }.map(\.element)
            // Oldest first: the proposals (one batch), then the approvals.
            #expect(listed.map(\.actionId) == mine + mine)
        }
        try l.verifyProjections()
    }

}
