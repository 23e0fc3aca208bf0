import Foundation
import Testing
@testable import ActionLedger
@testable import LedgerServer

/// A stream's catch-up that meets a page LMDB finds damaged (not an event the engine
/// refuses) sends what precedes it, then says why, as every answer says it.
@Suite struct StreamDamageTests {
    @Test func aDamagedPageEndsTheCatchUpWithTheEnginesErrorWithoutTheFolder() throws {
        let t = try TempLedger()
        try t.ledger.create(StoreCreation(testClock: true, demo: false), now: t0)
        _ = try t.ledger.execute(batch: (0..<300).map { CommandRequest(.propose(proposal("d-\($0)")), now: t0) })
        t.close()
        #expect(try PageDamage.cutEventsTree(after: 100, in: t.path) > 0)
        try t.reopen()
        let who = Identity(id: "tok", org: "quinn-co", scope: .auditor, subject: nil, person: nil)
        let head = try t.ledger.read { try $0.head().seq }
        var from: UInt64 = 1, seen: [UInt64] = [], failure: LedgerError?
        while from <= head, failure == nil {
            let (text, last, _, cut) = try LedgerServer.read(t.ledger, who, AgentCache(ledger: t.ledger), from: from, to: head) {
                "\($0.event.seq)\n"
            }
            seen += text.split(separator: "\n").compactMap { UInt64($0) }
            failure = cut
            from = last + 1
        }
        let e = try #require(failure, "read \(seen.count) events of \(head) and met no damage")
        #expect(e.code == .integrityFailure && e.details["problem"] == "damaged_page", "\(e)")
        #expect(!e.message.contains(t.directory.path) && e.message.contains("ledger.lmdb"), "\(e.message)")
        // Everything before the damaged page was sent, in order (the store's own first event
        // is no org's), and nothing past it.
        let first = try #require(seen.first)
        #expect(first <= 2 && seen == Array(first..<first + UInt64(seen.count)), "\(seen.prefix(5))")
        #expect(seen.last! > 100 && seen.last! < head, "\(seen.last!) of \(head)")
        #expect(LedgerServer.sseFailure(e).hasPrefix("retry: 60000\nevent: ledger_error\ndata: {\"error\":{\"code\":\"integrity_failure\""))
    }

    @Test func onlyTheEnginesAndLMDBsFailuresAreToldToAClient() {
        let store = "/srv/hidden/ledger.lmdb"
        let damage = ProblemMiddleware<APIContext>.clientError(LMDBError(code: -30796, operation: "mdb_cursor_get(\(store))"), store: store)
        #expect(damage?.code == .integrityFailure && damage?.message.contains("hidden") == false, "\(String(describing: damage))")
        let refusal = ProblemMiddleware<APIContext>.clientError(LedgerError(.corruptEvent, "seq 4 does not decode"), store: store)
        #expect(refusal?.code == .corruptEvent)
        #expect(ProblemMiddleware<APIContext>.clientError(CocoaError(.fileNoSuchFile), store: store) == nil)
    }
}
