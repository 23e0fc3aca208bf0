import Foundation
import Testing
@testable import ActionLedger

/// The per-org policy pointers and person bindings of rules version 2 are index records
/// too: a store written before them gets them on its first writable open, and
/// `verify --deep` rederives them and names one that was altered, added or removed.
@Suite struct OrgRecordsTests {
    typealias F = IntegrityFixtures

    func populated() throws -> TempLedger {
        let t = try TempLedger()
        try F.populate(t.ledger)
        try t.ledger.run(.setPolicy(PolicyDocument(userVerification: []), org: "quinn-co"), now: at("2026-11-23T09:00:00Z"))
        #expect(F.failure(t.ledger, VerifyOptions(deep: true)) == nil)
        return t
    }

    func meta(_ l: Ledger, _ body: (LogIndex, Transaction) throws -> Void) throws {
        try l.environment.write { txn in try body(LogDatabases.open(txn)!.meta, txn) }
    }

    @Test func anOlderStoreGetsItsRecordsWhenMigrated() throws {
        let t = try populated()
        // As a store written before rules version 2 holds it: no layout, no records.
        try meta(t.ledger) { m, txn in
            for key in [MetaLayout.key, MetaKey.policy(org: "quinn-co"), MetaKey.person("quinn")] { _ = try m.delete(txn, key: key) }
        }
        #expect(try t.ledger.read { try $0.personOrg("quinn") } == nil)
        try t.migrate()
        #expect(try t.ledger.read { try $0.personOrg("quinn") } == "quinn-co")
        #expect(try t.ledger.read { try $0.policy(org: "quinn-co").userVerification } == [])
        #expect(F.failure(t.ledger, VerifyOptions(deep: true)) == nil)
    }

    @Test func deepVerifyNamesAnAlteredBindingOrPointer() throws {
        let t = try populated()
        try meta(t.ledger) { m, txn in try m.put(txn, key: MetaKey.person("quinn"), value: Array("evil-co".utf8)) }
        let e = F.failure(t.ledger, VerifyOptions(deep: true))
        #expect(e?.details["problem"] == "index_mismatch" && e?.details["key"] == "person/quinn")
        try meta(t.ledger) { m, txn in
            try m.put(txn, key: MetaKey.person("quinn"), value: Array("quinn-co".utf8))
            _ = try m.delete(txn, key: MetaKey.policy(org: "quinn-co"))
        }
        #expect(F.failure(t.ledger, VerifyOptions(deep: true))?.details["problem"] == "index_missing")
        try meta(t.ledger) { m, txn in
            try m.put(txn, key: MetaKey.policy(org: "quinn-co"), value: Keys.u64(try LogReader(txn: txn, dbs: LogDatabases.open(txn)!).head().seq))
            try m.put(txn, key: MetaKey.policy(org: "ghost-co"), value: Keys.u64(1))
        }
        let extra = F.failure(t.ledger, VerifyOptions(deep: true))
        #expect(extra?.details["key"] == "policy/ghost-co")
    }

    /// A device id another org took is refused as taken, naming neither its person nor
    /// whether it is revoked (a pairing caller in one org probed another's devices so); in
    /// the same org the refusal names them as before.
    @Test func aTakenDeviceIdOfAnotherOrgIsNamedNoFurther() throws {
        let t = try TempLedger(), l = t.ledger!
        try l.run(.linkDevice(device: "bea-phone", person: "bea", org: "other-co", label: "B", platform: .ios))
        try l.run(.linkDevice(device: "bea-tab", person: "bea", org: "other-co", label: "T", platform: .web))
        try l.run(.revokeDevice(device: "bea-tab", reason: "lost"))
        for id in ["bea-phone", "bea-tab"] {
            let e = expectLedgerError(.duplicateDevice) {
                try l.run(.linkDevice(device: id, person: "quinn", org: "quinn-co", label: "Q", platform: .ios))
            }
            #expect(e.map { $0.message.contains("taken") && !$0.message.contains("bea ") && !$0.message.hasSuffix("bea")
                && !$0.message.contains("revoked;") } == true, "\(String(describing: e?.message))")
        }
        let same = expectLedgerError(.duplicateDevice) {
            try l.run(.linkDevice(device: "bea-tab", person: "bo", org: "other-co", label: "Q", platform: .ios))
        }
        #expect(same?.message.contains("already linked to bea (revoked") == true)
    }
}
