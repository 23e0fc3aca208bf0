import Foundation
import Testing
@testable import ActionLedger

/// What opening a store writes. A query opens the store too, and every write transaction
/// waits for LMDB's writer lock (held by an import or a long batch in another process), so
/// opening an up-to-date store must begin none and leave the file as it was; creating one
/// takes one, and catching up only the batches it folds.
@Suite struct OpenCostTests {
    /// A store whose projections trail the head by less than `maxLag`: up to date.
    func upToDateStore() throws -> TempLedger {
        let t = try TempLedger()
        try t.ledger.link("iphone")
        for i in 0..<40 { try t.ledger.run(.propose(proposal("a\(i)"))) }
        try t.ledger.run(.tap(.review, actionId: "a3", device: "iphone"))
        try t.ledger.run(.tap(.approve, actionId: "a3", device: "iphone"))
        return t
    }

    func checkpoints(_ l: Ledger) throws -> [UInt64] {
        try l.environment.read { txn in try l.registry.projections.map { try l.registry.meta($0.name, in: txn)?.checkpoint ?? 0 } }
    }

    @Test func creatingAStoreTakesOneWriteTransaction() throws {
        let t = try TempLedger()
        #expect(t.ledger.environment.writeTransactionsBegun == 1)
        #expect(try t.ledger.environment.read { txn in
            try t.ledger.registry.projections.allSatisfy { try t.ledger.registry.meta($0.name, in: txn)?.version == $0.version }
        })
        try t.reopen()
        #expect(t.ledger.environment.writeTransactionsBegun == 0)
    }

    @Test func reopeningAnUpToDateStoreBeginsNoWriteAndLeavesTheFileAsItWas() throws {
        let t = try upToDateStore()
        let head = try t.ledger.read { try $0.head().seq }
        let stored = try checkpoints(t.ledger)
        #expect(stored.allSatisfy { $0 < head && head - $0 < t.ledger.registry.maxLag }, "a short tail is up to date")
        let txnId = t.ledger.environment.lastCommittedTransactionId
        let bytes = try Data(contentsOf: URL(fileURLWithPath: t.path))

        try t.reopen()
        #expect(t.ledger.environment.writeTransactionsBegun == 0)
        #expect(t.ledger.environment.lastCommittedTransactionId == txnId)
        #expect(try Data(contentsOf: URL(fileURLWithPath: t.path)) == bytes)
        #expect(try checkpoints(t.ledger) == stored)

        // The handles found without writing serve queries and commands alike.
        #expect(try t.ledger.query { try $0.auditAction("a3", now: t0) }.state == "approved")
        try t.ledger.run(.tap(.review, actionId: "a4", device: "iphone"))
        #expect(try t.ledger.read { try $0.head().seq } == head + 1)
        #expect(t.ledger.environment.lastCommittedTransactionId == txnId + 1)
        try t.ledger.verifyProjections()
    }

    @Test func aVersionBumpIsRefusedUntilMigratedThenCaughtUpPerBatch() throws {
        let t = try upToDateStore()
        let head = try t.ledger.read { try $0.head().seq }
        // What a build with another `today` version left: its stored version differs.
        try t.ledger.environment.write { txn in
            var meta = try #require(try t.ledger.registry.meta("today", in: txn))
            meta.version += 1
            try t.ledger.registry.saveMeta(meta, "today", in: txn)
        }
        // An open converts nothing: writes are refused until `migrate`.
        try t.reopen()
        #expect(t.ledger.environment.writeTransactionsBegun == 0)
        expectLedgerError(.migrationRequired) { try t.ledger.run(.tap(.review, actionId: "a4", device: "iphone")) }
        // One write resets it (the others are left alone), one batch folds the 43 events, one
        // removes the record of the migration under way.
        #expect(try t.ledger.migrate().rebuilt == ["today"])
        #expect(t.ledger.environment.writeTransactionsBegun == 3)
        try t.reopen()
        let today = try t.ledger.environment.read { try t.ledger.registry.meta("today", in: $0) }
        #expect(today?.version == TodayProjection().version && today?.checkpoint == head)
        try t.ledger.verifyProjections()
        try t.reopen()
        #expect(t.ledger.environment.writeTransactionsBegun == 0)
    }

    @Test func aLaggingProjectionCostsOneWritePerBatchAndNothingElse() throws {
        let t = try upToDateStore()
        let head = try t.ledger.read { try $0.head().seq }
        // What an interrupted catch-up leaves: `today` empty at seq 0, the log far ahead.
        try t.ledger.environment.write { txn in
            let meta = try #require(try t.ledger.registry.meta("today", in: txn))
            let reset = ProjectionMeta(version: meta.version, generation: meta.generation, checkpoint: 0)
            try #require(try t.ledger.registry.store(for: TodayProjection(), meta: reset, in: txn)).removeAll()
            try t.ledger.registry.saveMeta(reset, "today", in: txn)
        }
        let before = try checkpoints(t.ledger)
        try t.reopen()
        #expect(t.ledger.environment.writeTransactionsBegun == 1)
        // `today` is level with the head; the others, a short tail behind, are left alone.
        let names = t.ledger.registry.projections.map(\.name)
        let after = try checkpoints(t.ledger)
        for (i, name) in names.enumerated() {
            #expect(after[i] == (name == "today" ? head : before[i]), "\(name)")
        }
        try t.ledger.verifyProjections()
    }
}
