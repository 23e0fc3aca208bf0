import Foundation
import Testing
@testable import ActionLedger

/// `ledger migrate` on a store written by the landed build (Fixtures/landed-c37b224.lmdb,
/// the demo store of main c37b224: copied projection rows, running digests, Today items
/// holding proposals): writes are refused until it is migrated, the events are kept byte
/// for byte, and the converted store verifies deeply and answers as before.
@Suite struct MigrateTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/landed-c37b224.lmdb").path

    /// A scratch directory, removed at deinit.
    final class TempDir {
        let path: String
        init() throws {
            path = FileManager.default.temporaryDirectory.appendingPathComponent("al-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    func landedCopy() throws -> (TempDir, String) {
        let dir = try TempDir()
        let path = dir.path + "/landed.lmdb"
        try FileManager.default.copyItem(atPath: Self.fixture, toPath: path)
        return (dir, path)
    }

    @Test func aStoreOfTheLandedBuildIsRefusedForWritesThenMigratedAndVerifies() throws {
        let (dir, path) = try landedCopy()
        defer { withExtendedLifetime(dir) {} }
        let env = ["LEDGER_NOW": "2026-11-20T10:00:00Z"]
        let eventsBefore = try LedgerProcess.run(["log", "--db", path], environment: env)
        #expect(eventsBefore.status == 0)

        // The log reads; a write is refused, naming `ledger migrate`, and changes nothing.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let refused = try LedgerProcess.run(["review", "x-01", "--device", "quinn-iphone", "--db", path, "--json"], environment: env)
        #expect(refused.status == 40)
        #expect(refused.stderr.contains("ledger migrate"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
        // A query of a projection of the older version is refused the same way, not answered from old rows.
        let today = try LedgerProcess.run(["today", "--person", "quinn", "--db", path], environment: env)
        #expect(today.status == 19 && today.stderr.contains("ledger migrate"))

        let migrated = try LedgerProcess.run(["migrate", "--db", path, "--json"], environment: env)
        #expect(migrated.status == 0, "\(migrated.stderr)")
        let report = try JSONParser.parse(migrated.stdout)
        #expect(report["migrated"] == .bool(true))
        #expect(report["rebuilt"] == .array(["today", "autoshipped", "audit", "activity"]))
        #expect(try LedgerProcess.run(["log", "--db", path], environment: env).stdout == eventsBefore.stdout)
        let deep = try LedgerProcess.run(["verify", "--deep", "--db", path], environment: env)
        #expect(deep.status == 0, "\(deep.stderr)")
        let again = try LedgerProcess.run(["migrate", "--db", path], environment: env)
        #expect(again.status == 0 && again.stdout.contains("nothing to migrate"))

        // Converted: queries answer from the new shape, writes go through, rebuild --verify agrees.
        let l = try Ledger(path: path)
        #expect(l.migrationNeeded == nil)
        try l.verifyProjections()
        #expect(try l.rebuild(options: RebuildOptions(verify: true)).allSatisfy { $0.difference == nil })
        let feed = try l.query { try $0.today(TodayQuery(person: "quinn", now: at("2026-11-20T10:00:00Z"))) }
        #expect(feed.count > 0)
        let trail = try l.query { try $0.auditAction(feed.items[0].actionId, now: at("2026-11-20T10:00:00Z")) }
        #expect(trail.trail.first?.type == .actionProposed && trail.trail.first?.specialist != nil)
    }

    /// A ledger opened while its store needed migrating (a server running through `ledger
    /// migrate`) takes writes once another handle has migrated it, without a reopen.
    @Test func aHandleOpenedBeforeTheMigrationWritesAfterIt() throws {
        let t = try TempLedger()
        try t.ledger.link("iphone")
        try t.ledger.environment.write { txn in try LogDatabases.open(txn)!.meta.put(txn, key: MetaLayout.key, value: [3]) }
        try t.reopen()
        let running = try #require(t.ledger)
        #expect(running.migrationNeeded != nil)
        expectLedgerError(.migrationRequired) { try running.run(.propose(proposal("before"))) }
        let other = try Ledger(path: t.path)
        _ = try other.migrate()
        #expect(try running.run(.propose(proposal("after"))).events.count == 1)
        #expect(running.migrationNeeded == nil)
        _ = try running.verify(VerifyOptions(deep: true))
    }

    @Test func migrateRefusesAMissingStoreAndALogThatDoesNotVerify() throws {
        let dir = try TempDir()
        let missing = try LedgerProcess.run(["migrate", "--db", dir.path + "/nothing.lmdb"])
        #expect(missing.status == 2)
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/nothing.lmdb"))

        let (copyDir, path) = try landedCopy()
        defer { withExtendedLifetime(copyDir) {} }
        // Break the chain: flip a byte of event 5's stored value.
        do {
            let l = try Ledger(path: path)
            try l.environment.write { txn in
                let key = Keys.u64(5)
                var value = try #require(try txn.get(l.dbs.events, key: key))
                value[value.count - 1] ^= 0x01
                try txn.put(l.dbs.events, key: key, value: value)
            }
        }
        let refused = try LedgerProcess.run(["migrate", "--db", path])
        #expect(refused.status == 13)
        #expect(try Ledger(path: path).migrationNeeded != nil)
    }

    /// A current store gets the same checks: migrate run as an upgrade step never says
    /// "nothing to migrate" about a log that does not verify, or beside a running rebuild.
    @Test func migrateChecksACurrentStoreToo() throws {
        let t = try TempLedger()
        try t.ledger.run(.propose(proposal("a1")))
        try t.ledger.run(.propose(proposal("a2")))
        #expect(try t.ledger.migrate().reason == nil)
        do {
            let lock = try RebuildLock(ledgerPath: t.ledger.environment.path)
            defer { withExtendedLifetime(lock) {} }
            #expect(code { _ = try t.ledger.migrate() } == .busy)
        }
        try t.ledger.environment.write { txn in
            let key = Keys.u64(2)
            var value = try #require(try txn.get(t.ledger.dbs.events, key: key))
            value[value.count - 1] ^= 0x01
            try txn.put(t.ledger.dbs.events, key: key, value: value)
        }
        #expect(code { _ = try t.ledger.migrate() } == .integrityFailure)
    }

    /// A migration killed after its conversion committed and before its folds finished:
    /// the store stays one to migrate (an open neither writes nor folds, so nothing runs
    /// before migrate's lock and chain check), and the resumed migrate reports the work.
    @Test func anInterruptedMigrationIsResumedByMigrateAlone() throws {
        let (dir, path) = try landedCopy()
        defer { withExtendedLifetime(dir) {} }
        let reason: String
        do {
            // Migrate's first transaction, and nothing after it.
            let l = try Ledger(path: path)
            reason = try #require(l.migrationNeeded)
            _ = try l.beginMigration(reason: reason)
        }
        let file = URL(fileURLWithPath: path)
        let bytes = try Data(contentsOf: file)
        let reopened = try Ledger(path: path)
        #expect(reopened.migrationNeeded?.contains("interrupted") == true)
        expectLedgerError(.migrationRequired) { try reopened.run(.propose(proposal("during"))) }
        do {
            let lock = try RebuildLock(ledgerPath: path)
            defer { withExtendedLifetime(lock) {} }
            #expect(code { _ = try reopened.migrate() } == .busy)
        }
        #expect(try Data(contentsOf: file) == bytes, "an open, a refused write or a refused migrate changed the store")

        let report = try reopened.migrate()
        #expect(report.reason == reason)
        #expect(report.rebuilt == ["today", "autoshipped", "audit", "activity"])
        let after = try Ledger(path: path)
        #expect(after.migrationNeeded == nil)
        _ = try after.verify(VerifyOptions(deep: true))
        #expect(try after.migrate().reason == nil)
    }
}
