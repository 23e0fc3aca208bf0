import Testing
@testable import ActionLedger

@Suite struct LedgerSmokeTests {
    @Test func mediumStakesNeedsReviewThenApprove() throws {
        let t = try TempLedger()
        let l = t.ledger!
        try l.link("iphone")
        try l.link("laptop", platform: .web)
        try l.run(.propose(proposal("a1", stakes: .medium)))
        expectLedgerError(.tapsRequired) { try l.run(.tap(.approve, actionId: "a1", device: "iphone")) }
        let reviewed = try l.run(.tap(.review, actionId: "a1", device: "iphone"))
        #expect(reviewed.nextTap == .approve)
        let approved = try l.run(.tap(.approve, actionId: "a1", device: "laptop"))
        #expect(approved.action?.status == .approved)
        #expect(approved.action?.decision?.device == "laptop")
        let events = try l.read { try $0.actionEvents("a1") }
        #expect(events.map(\.event.type) == [.actionProposed, .actionReviewed, .actionApproved])
        #expect(events.map(\.event.device) == [nil, "iphone", "laptop"])
        #expect(try l.read { try $0.head().seq } == 5)
    }
}
