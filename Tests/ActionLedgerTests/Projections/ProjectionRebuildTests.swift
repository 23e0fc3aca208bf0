import Foundation
import Testing
@testable import ActionLedger

/// Today's fold under another version number: what a version bump looks like on disk.
struct BumpedToday: Projection {
    let inner = TodayProjection()
    var name: String { inner.name }
    var version: UInt32 { inner.version + 1 }
    var databases: [String] { inner.databases }
    func apply(_ event: Event, to store: ProjectionStore) throws { try inner.apply(event, to: store) }
}

/// Fills a ledger with `count` proposals (half of them auto-ship) in group commits.
func fill(_ l: Ledger, count: Int, from first: Int = 0, person: String = "quinn") throws {
    for chunk in stride(from: first, to: first + count, by: 200) {
        var requests: [CommandRequest] = []
        for i in chunk..<min(chunk + 200, first + count) {
            let stakes: Stakes = i % 2 == 0 ? .low : .medium
            let kind = i % 3 == 0 ? "send_reply" : "publish_post"
            let input = proposal("p\(i)", person: person, stakes: stakes, confidence: 0.9, kind: kind)
            requests.append(CommandRequest(.propose(input), now: t0.adding(milliseconds: Int64(i) * 1000)))
        }
        for r in try l.execute(group: requests) { _ = try r.get() }
    }
}

func liveMetas(_ l: Ledger) throws -> [String: ProjectionMeta] {
    try l.environment.read { txn in
        Dictionary(uniqueKeysWithValues: try l.registry.projections.map { ($0.name, try l.registry.meta($0.name, in: txn)!) })
    }
}

@Suite struct ProjectionRebuildTests {
    /// Today's fold keys actions by their id's bytes, inline up to 32 and by hash beyond:
    /// ids of 32, 33 and 128 bytes, proposed, tapped, decided or left pending across chunks
    /// of one event, rebuild equal to the live fold, and the feed shows them by their ids.
    @Test func longActionIdsFoldAsShortOnes() throws {
        let t = try TempLedger()
        let l = t.ledger!
        try l.link("iphone")
        let ids = [32, 33, 128].flatMap { n in (0..<3).map { i in String(repeating: "a", count: n - 2) + "-\(i)" } }
        for (i, id) in ids.enumerated() {
            try l.run(.propose(proposal(id, stakes: .medium)), now: t0.adding(milliseconds: Int64(i)))
            if i % 3 > 0 { try l.run(.tap(.review, actionId: id, device: "iphone"), now: t0.adding(milliseconds: Int64(i))) }
            if i % 3 == 2 { try l.run(.tap(.approve, actionId: id, device: "iphone"), now: t0.adding(milliseconds: Int64(i))) }
        }
        let pending = ids.enumerated().filter { $0.offset % 3 < 2 }.map(\.element)
        func feed() throws -> [String] {
            try l.query { try $0.today(TodayQuery(person: "quinn", now: t0.adding(milliseconds: 100))) }.items.map(\.actionId).sorted()
        }
        #expect(try feed() == pending.sorted())
        var options = RebuildOptions()
        options.batchSize = 1
        _ = try l.rebuild(["today"], options: options)
        #expect(try feed() == pending.sorted())
        // A name given twice is rebuilt once (it used to trap after the rebuild began writing).
        #expect(try l.rebuild(["today", "audit", "today"]).map(\.projection) == ["today", "audit"])
        #expect(try feed() == pending.sorted())
        #expect(try l.rebuild(["today"], options: RebuildOptions(verify: true)).allSatisfy { $0.difference == nil })
    }

    @Test func rebuildSwapsGenerationsAndKeepsTheDigests() throws {
        let t = try TempLedger()
        let l = t.ledger!
        try fill(l, count: 300)
        let before = try liveMetas(l)
        var reports: [RebuildProgress] = []
        var options = RebuildOptions()
        options.batchSize = 64
        let results = try l.rebuild(["today", "audit"], options: options) { reports.append($0) }
        #expect(results.map(\.projection) == ["today", "audit"])
        #expect(reports.count >= 2 && reports.last?.checkpoint == reports.last?.head)
        let after = try liveMetas(l)
        for r in results {
            #expect(r.swapped && r.resumedFrom == 0)
            #expect(after[r.projection]!.generation != before[r.projection]!.generation)
            #expect(after[r.projection]!.checkpoint == before[r.projection]!.checkpoint)
        }
        #expect(after["devices"] == before["devices"])
        // Appends after the swap land in the new generation; queries read it.
        try fill(l, count: 10, from: 300)
        let pending = try l.read { r in try (0..<310).filter { try r.actionState("p\($0)")?.status == .pending }.count }
        #expect(pending > 150)
        #expect(try l.query { try $0.today(TodayQuery(person: "quinn", now: t0.adding(milliseconds: 400_000))) }.count == pending)
        #expect(try l.rebuild(options: RebuildOptions(verify: true)).allSatisfy { $0.difference == nil })
        expectLedgerError(.invalidInput) { try l.rebuild(["nope"]) }
    }

    /// A rebuild folds chunks in memory and writes each one; an action proposed in one
    /// chunk and reviewed, held, edited or decided in a later one (its Today item read back
    /// from the shadow and changed or deleted there) must end exactly as the live fold left it.
    @Test func chunkBoundariesLeaveTheSameState() throws {
        let t = try TempLedger()
        let l = t.ledger!
        try l.link("iphone")
        for i in 0..<40 { try l.run(.propose(proposal("c\(i)", stakes: i % 4 == 0 ? .high : .medium))) }
        for i in 0..<40 {
            let id = "c\(i)"
            switch i % 8 {
            case 0: try l.run(.tap(.review, actionId: id, device: "iphone"))
            case 1: try l.run(.hold(actionId: id, device: "iphone", until: at("2026-11-22T12:00:00Z")))
            case 2: try l.run(.edit(actionId: id, device: "iphone", text: "Edited \(i)"))
            case 3, 5:
                try l.run(.tap(.review, actionId: id, device: "iphone"))
                try l.run(.tap(.approve, actionId: id, device: "iphone"))
            case 4: try l.run(.dismiss(actionId: id, device: "iphone", reason: "no"))
            default: break
            }
        }
        func feed() throws -> (Int, [TodayItem]) {
            let f = try l.query { try $0.today(TodayQuery(person: "quinn", now: t0.adding(milliseconds: 60_000))) }
            return (f.count, f.items)
        }
        let live = try feed()
        #expect(live.0 > 10)
        for batch in [1, 7, 16] {
            var options = RebuildOptions()
            options.batchSize = batch
            var seen: [UInt64] = []
            _ = try l.rebuild(["today", "devices", "audit"], options: options) { seen.append($0.checkpoint) }
            #expect(seen.count > 1, "batch \(batch): folded in one chunk")
            #expect(try l.rebuild(options: RebuildOptions(verify: true)).allSatisfy { $0.difference == nil }, "batch \(batch)")
            let rebuilt = try feed()
            #expect(rebuilt.0 == live.0 && rebuilt.1 == live.1, "batch \(batch)")
        }
        // A memory budget smaller than one event's state writes a chunk every 1 024 events.
        try fill(l, count: 2500, from: 100)
        var options = RebuildOptions()
        options.memoryBudget = 1
        _ = try l.rebuild(options: options)
        #expect(try l.rebuild(options: RebuildOptions(verify: true)).allSatisfy { $0.difference == nil })
    }

    /// A chunk is written in transactions of at most `writePart` entries (its postings with
    /// the last): the rebuilt state is the same whatever the part size (0 writes one entry
    /// per transaction, as 1 does).
    @Test func chunksWrittenInPartsLeaveTheSameState() throws {
        let t = try TempLedger()
        let l = t.ledger!
        try fill(l, count: 600)
        let before = try liveMetas(l)
        let lastTransaction = { l.environment.lastCommittedTransactionId }
        for part in [0, 7, 100_000] {
            var options = RebuildOptions()
            options.writePart = part
            let started = lastTransaction()
            let results = try l.rebuild(options: options)
            #expect(results.allSatisfy { $0.swapped && $0.checkpoint == before[$0.projection]!.checkpoint }, "part \(part)")
            #expect(try l.rebuild(options: RebuildOptions(verify: true)).allSatisfy { $0.difference == nil }, "part \(part)")
            // One chunk: written in one transaction, or in many parts of a few entries.
            let commits = lastTransaction() - started
            #expect(part == 100_000 ? commits <= 3 : commits > 50, "part \(part): \(commits) commits")
        }
    }

    /// A rebuild stopped between two parts of a chunk leaves its shadow half-written, its
    /// record marked (version 0): the next rebuild starts that shadow again rather than fold
    /// the chunk into it a second time.
    @Test func aHalfWrittenShadowIsStartedAgain() throws {
        let t = try TempLedger()
        let l = t.ledger!
        try fill(l, count: 300)
        let before = try liveMetas(l)
        let today = l.registry.projections.first { $0.name == "today" }!
        // What a rebuild stopped after a chunk's first part leaves: the shadow holds entries
        // of a chunk past its recorded checkpoint.
        try l.environment.write { txn in
            let shadow = ProjectionMeta(version: 0, generation: before["today"]!.generation == 0 ? 1 : 0, checkpoint: 120)
            let store = try #require(try l.registry.store(for: today, meta: shadow, in: txn))
            try store.put(TodayProjection.items, key: Array("p999".utf8), value: [1, 2, 3])
            try l.registry.saveMeta(shadow, "today", rebuild: true, in: txn)
        }
        let results = try l.rebuild(["today"])
        #expect(results.count == 1 && results[0].resumedFrom == 0 && results[0].swapped)
        #expect(try l.rebuild(options: RebuildOptions(verify: true)).allSatisfy { $0.difference == nil })
    }

    @Test func verifyFindsTheFirstDifferingEntry() throws {
        let t = try TempLedger()
        let l = t.ledger!
        try fill(l, count: 50)
        // Tamper with the live audit postings behind the projection's back: file seq 7 under
        // an actor who never acted.
        let meta = try liveMetas(l)["audit"]!
        try l.environment.write { txn in
            let store = try l.registry.store(for: AuditProjection(), meta: meta, in: txn)!
            try txn.put(store.postingDatabase!, key: [UInt8(AuditProjection.byActor)] + Array("mallory".utf8) + [0] + Keys.u64(7),
                        value: Keys.u64(7))
        }
        let results = try l.rebuild(["audit", "today"], options: RebuildOptions(verify: true))
        let audit = try #require(results.first { $0.projection == "audit" })
        #expect(audit.difference?.database == "by_actor")
        #expect(audit.difference?.key == Array("mallory".utf8))
        #expect(audit.difference?.live != nil && audit.difference?.rebuilt == nil)
        #expect(audit.liveDigest != audit.digest)
        #expect(results.first { $0.projection == "today" }?.difference == nil)
        // Verify never swaps and leaves no shadow behind; a real rebuild repairs it.
        #expect(try liveMetas(l)["audit"] == meta)
        #expect(try l.environment.read { try l.registry.meta("audit", rebuild: true, in: $0) } == nil)
        _ = try l.rebuild(["audit"])
        #expect(try l.rebuild(["audit"], options: RebuildOptions(verify: true))[0].difference == nil)
    }

    /// `rebuild --verify` folds into memory in one read snapshot: the file is byte-identical
    /// afterwards, no write transaction is begun, and it runs on a read-only open.
    @Test func verifyWritesNothing() throws {
        let t = try TempLedger()
        try fill(t.ledger, count: 120)
        try t.reopen()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: t.path))
        let txnId = t.ledger.environment.lastCommittedTransactionId
        #expect(try t.ledger.rebuild(options: RebuildOptions(verify: true)).allSatisfy { $0.difference == nil && $0.liveDigest == $0.digest })
        #expect(t.ledger.environment.writeTransactionsBegun == 0 && t.ledger.environment.lastCommittedTransactionId == txnId)
        #expect(try Data(contentsOf: URL(fileURLWithPath: t.path)) == bytes)
        try t.reopen(options: Ledger.Options(readOnly: true))
        #expect(try t.ledger.rebuild(options: RebuildOptions(verify: true)).count == t.ledger.registry.projections.count)
        #expect(try Data(contentsOf: URL(fileURLWithPath: t.path)) == bytes)
    }

    @Test func twoRebuildsCannotRunAtOnce() throws {
        let t = try TempLedger()
        try fill(t.ledger, count: 5)
        let held = try RebuildLock(ledgerPath: t.path)
        do {
            _ = try t.ledger.rebuild()
            Issue.record("a second rebuild ran")
        } catch let e as LedgerError {
            #expect(e.code == .busy)
        }
        withExtendedLifetime(held) {}
    }

    @Test func versionBumpIsRefusedReadOnlyAndCaughtUpByMigrate() throws {
        let t = try TempLedger()
        try fill(t.ledger, count: 40)
        let before = try liveMetas(t.ledger)["today"]!
        var bumped = Ledger.Options()
        bumped.projections = ProjectionRegistry([BumpedToday(), AutoShippedProjection()])
        var readOnly = bumped
        readOnly.readOnly = true
        try t.reopen(options: readOnly)
        do {
            _ = try t.ledger.query { try $0.today(TodayQuery(person: "quinn", now: t0)) }
            Issue.record("a stale projection answered")
        } catch let e as LedgerError {
            #expect(e.code == .projectionStale)
        }
        #expect(try t.ledger.query { try $0.statuses() }.first?.state == "stale")
        #expect(try t.migrate(options: bumped).rebuilt == ["today"])
        let after = try t.ledger.environment.read { try t.ledger.registry.meta("today", in: $0)! }
        #expect(after.version == before.version + 1 && after.checkpoint == before.checkpoint)
        #expect(try t.ledger.query { try $0.today(TodayQuery(person: "quinn", now: t0)) }.count > 0)
    }
}
