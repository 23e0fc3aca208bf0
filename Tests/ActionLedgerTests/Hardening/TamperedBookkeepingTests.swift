import Foundation
import Testing
@testable import ActionLedger

/// The records beside the chain (projection postings, the layout marker, the `commands`
/// index) are bookkeeping anyone with the file can edit. Each edit is caught: a check fails
/// or a read refuses, never an audit answer that silently leaves an approval out.
@Suite struct TamperedBookkeepingTests {
    /// A store whose audit postings are stored (rebuilt), with a device list of several.
    func approvedOnTheIphone() throws -> TempLedger {
        let t = try TempLedger(), l = t.ledger!
        try l.link("iphone")
        for id in ["a1", "a2", "a3"] {
            try l.run(.propose(proposal(id, stakes: .low)))
            try l.run(.tap(.approve, actionId: id, device: "iphone"))
        }
        _ = try l.rebuild()
        return t
    }

    /// Rewrites the audit projection's segments: `edit` gets each (key, value) and returns
    /// the entries to store instead (all of them are replaced).
    func editSegments(_ l: Ledger, _ edit: ([UInt8], [UInt8]) -> [([UInt8], [UInt8])]) throws {
        try l.environment.write { txn in
            let generation = try #require(try l.registry.meta("audit", in: txn)).generation
            let db = try #require(try txn.openDatabase("p/audit/\(generation)/segments", create: false))
            var entries: [([UInt8], [UInt8])] = []
            try txn.scan(db) { k, v in entries.append((Array(k), Array(v))); return true }
            for (k, _) in entries { _ = try txn.delete(db, key: k) }
            for (k, v) in entries { for (k2, v2) in edit(k, v) { try txn.put(db, key: k2, value: v2) } }
        }
    }

    func expectMismatch(_ l: Ledger, _ comment: Comment) {
        do {
            _ = try l.rebuild(options: RebuildOptions(verify: true))
            Issue.record("rebuild --verify passed: \(comment)")
        } catch let e as LedgerError {
            #expect(e.code == .integrityFailure && e.details["problem"] == "projection_mismatch", "\(comment): \(e)")
        } catch { Issue.record("\(error)") }
    }

    /// The digests of postings are order-free; their order and place are checked on their own.
    @Test func postingsOutOfOrderOrMisfiledFailTheComparison() throws {
        let t = try approvedOnTheIphone(), l = t.ledger!
        #expect(try l.rebuild(options: RebuildOptions(verify: true)).allSatisfy { $0.difference == nil })
        // The same postings, the last two swapped (the key still names the first).
        try editSegments(l) { k, v in
            guard v.count >= 24 else { return [(k, v)] }
            return [(k, Array(v.dropLast(16) + v.suffix(8) + v.dropLast(8).suffix(8)))]
        }
        expectMismatch(l, "swapped postings")

        let u = try approvedOnTheIphone(), m = u.ledger!
        // A segment filed under another separator byte: the queries never find it.
        try editSegments(m) { k, v in
            guard v.count >= 24 else { return [(k, v)] }
            var moved = k
            moved[k.count - 9] = 1
            return [(moved, v)]
        }
        expectMismatch(m, "misfiled segment")

        let w = try approvedOnTheIphone(), n = w.ledger!
        // A segment split in two whose second key names a seq it does not start with.
        try editSegments(n) { k, v in
            guard v.count >= 24 else { return [(k, v)] }
            let tail = Array(v.suffix(8)), lateKey = Array(k.dropLast(8)) + Keys.u64(tail.withUnsafeBytes { Keys.readU64($0) } - 1)
            return [(k, Array(v.dropLast(8))), (lateKey, tail)]
        }
        expectMismatch(n, "segment key naming another seq")
    }

    /// A layout marker set back: `verify --deep` cannot compare, so it is never ok, and
    /// the queries refuse rather than answer from unchecked state.
    @Test func aLayoutMarkerSetBackIsRefusedNotTrusted() throws {
        let t = try approvedOnTheIphone(), l = t.ledger!
        _ = try l.query { try $0.today(TodayQuery(person: "quinn", now: t0)) }
        try l.environment.write { txn in try l.dbs.meta.put(txn, key: MetaLayout.key, value: [1]) }
        try t.reopen()
        #expect(t.ledger.migrationNeeded != nil)
        #expect(code { _ = try t.ledger.query { try $0.today(TodayQuery(person: "quinn", now: t0)) } } == .projectionStale)
        let deep = try LedgerProcess.run(["verify", "--deep", "--db", t.path])
        #expect(deep.status == LedgerError.Code.migrationRequired.exitStatus, "\(deep.stdout) \(deep.stderr)")
        #expect(deep.stderr.contains("ledger migrate"))
    }

    /// A marker above this build's layout is a newer build's store: refused for queries, for
    /// `verify --deep` and for writes, and never converted down by `migrate`.
    @Test func aLayoutMarkerAboveThisBuildsIsNeverConvertedDown() throws {
        let t = try approvedOnTheIphone(), l = t.ledger!
        try l.environment.write { txn in try l.dbs.meta.put(txn, key: MetaLayout.key, value: [MetaLayout.current + 1]) }
        try t.reopen()
        #expect(t.ledger.writtenByNewerBuild)
        #expect(code { _ = try t.ledger.query { try $0.today(TodayQuery(person: "quinn", now: t0)) } } == .projectionStale)
        #expect(code { try t.ledger.run(.propose(proposal("a9"))) } == .migrationRequired)
        #expect(code { _ = try t.ledger.migrate() } == .invalidInput)
        #expect(try t.ledger.read { r in try MetaLayout.layout(r.dbs, r.txn) } == MetaLayout.current + 1)
        let deep = try LedgerProcess.run(["verify", "--deep", "--db", t.path])
        #expect(deep.status == LedgerError.Code.migrationRequired.exitStatus && deep.stderr.contains("newer build"), "\(deep.stderr)")
    }

    /// A `commands` entry pointing at another command's events: a retry under the forged id
    /// is refused as corrupt, never answered with the other command's result.
    @Test func aCommandsEntryNamingAnotherCommandsEventsIsCorrupt() throws {
        let t = try TempLedger(), l = t.ledger!
        try l.link("iphone")
        let seq = try l.run(.propose(proposal("a1")), commandId: "specialist-1").events[0].seq
        try l.environment.write { txn in
            try l.dbs.commands.put(txn, key: "queued-1".utf8, value: LogReader.commandRecord(first: seq, count: 1))
        }
        #expect(code { try l.run(.propose(proposal("a1")), commandId: "queued-1") } == .corruptEvent)
        #expect(try l.run(.propose(proposal("a1")), commandId: "specialist-1").replayed)
    }

    /// A policies record of the wrong length (the audit's policy version at each seq) is
    /// named damage on every audit listing, never a read out of bounds that takes the
    /// process, or `ledger serve`, down.
    @Test func aShortPoliciesRecordIsStaleNotATrap() throws {
        let t = try approvedOnTheIphone(), l = t.ledger!
        try l.run(.setPolicy(PolicyDocument(version: 1), org: "quinn-co"))
        try l.run(.propose(proposal("a4", stakes: .low)))
        try l.run(.tap(.approve, actionId: "a4", device: "iphone"))
        _ = try l.rebuild()
        try l.environment.write { txn in
            let generation = try #require(try l.registry.meta("audit", in: txn)).generation
            // The audit's records share one database, each table under its tag byte (policies: 0).
            let db = try #require(try txn.openDatabase("p/audit/\(generation)", create: false))
            var entries: [([UInt8], [UInt8])] = []
            try txn.scan(db) { k, v in
                if k.first == UInt8(AuditProjection.policies) { entries.append((Array(k), Array(v))) }
                return true
            }
            try #require(!entries.isEmpty)
            for (k, v) in entries { try txn.put(db, key: k, value: Array(v.prefix(3))) }
        }
        do {
            _ = try l.query { try $0.audit(.device("iphone"), limit: 100) }
            Issue.record("an audit listing answered from a damaged record")
        } catch let e as LedgerError {
            #expect(e.code == .projectionStale, "\(e)")
        }
    }

    /// A projection's checkpoint moved back: a query replays as its tail postings already
    /// stored, and used to list them twice (seqs running backwards). Postings must rise.
    @Test func aRolledBackCheckpointIsStaleNotAListingTwice() throws {
        let t = try approvedOnTheIphone(), l = t.ledger!
        try l.environment.write { txn in
            let meta = try #require(try l.registry.meta("audit", in: txn))
            let back = ProjectionMeta(version: meta.version, generation: meta.generation, checkpoint: meta.checkpoint - 3)
            try l.registry.saveMeta(back, "audit", in: txn)
        }
        do {
            let rows = try l.query { try $0.audit(.device("iphone"), limit: 100) }.entries
            Issue.record("answered from doubled postings: \(rows.map(\.seq))")
        } catch let e as LedgerError {
            #expect(e.code == .projectionStale, "\(e)")
        }
    }
}
