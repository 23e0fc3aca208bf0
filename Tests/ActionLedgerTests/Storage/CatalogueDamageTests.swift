import CLMDB
import Foundation
import Testing
@testable import ActionLedger

/// Damage to the catalogue of databases (the main database's root page) under an open
/// store: LMDB answers the lookups after it `MDB_BAD_TXN`, which ordinary failures also
/// cause; the engine tells damage apart, so it is reported as damage, not as a storage fault.
@Suite struct CatalogueDamageTests {
    @Test func aDamagedCatalogueUnderAnOpenStoreIsReportedAsDamage() throws {
        let t = try TempLedger()
        try t.ledger.create(StoreCreation(testClock: true, demo: false), now: t0)
        _ = try t.ledger.execute(batch: (0..<30).map { CommandRequest(.propose(proposal("c-\($0)")), now: t0) })
        try PageDamage.unflag(page: try PageDamage.mainRoot(in: t.path), in: t.path)
        for attempt in ["a read", "a query", "a write"] {
            do {
                switch attempt {
                case "a read": _ = try t.ledger.read { try $0.head() }
                case "a query": _ = try t.ledger.read { try $0.actionState("c-3") }
                default: try t.ledger.run(.propose(proposal("after")))
                }
                Issue.record("\(attempt) succeeded on a damaged catalogue")
            } catch let e as LMDBError {
                #expect(e.code == MDB_CORRUPTED && e.isDamage, "\(attempt): \(e)")
                let told = e.ledgerError(store: t.path)
                #expect(told.code == .integrityFailure && told.details["problem"] == "damaged_page", "\(attempt): \(told)")
            }
        }
    }
}
