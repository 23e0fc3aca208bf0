import Testing
@testable import ActionLedger

/// Projections trail the log by fewer than `maxLag` events: the commit that would leave
/// them `maxLag` behind folds the tail, queries fold what is left in memory, and a fold
/// that cannot apply an event stops the engine naming that seq.
@Suite struct ProjectionLagTests {
    func checkpoints(_ l: Ledger) throws -> [UInt64] {
        try l.environment.read { txn in try l.registry.projections.map { try l.registry.meta($0.name, in: txn)?.checkpoint ?? 0 } }
    }

    @Test func commitsFoldOnlyWhenTheLagReachesMaxLag() throws {
        var options = Ledger.Options()
        options.projections = ProjectionRegistry(ProjectionRegistry.standard.projections, maxLag: 4)
        let t = try TempLedger(options: options)
        let l = t.ledger!
        try l.link("iphone")                                    // seq 1
        try l.run(.propose(proposal("a1")))                     // 2
        try l.run(.propose(proposal("a2")))                     // 3
        #expect(try checkpoints(l).allSatisfy { $0 == 0 })      // lag 3 < 4: nothing folded
        // The query folds the three events in memory: a1 and a2 are on the feed.
        #expect(try l.query { try $0.today(TodayQuery(person: "quinn", now: t0)) }.items.map(\.actionId).sorted() == ["a1", "a2"])
        #expect(try l.query { try $0.statuses() }.allSatisfy { $0.state == "live" && $0.lag == 3 })
        try l.run(.tap(.review, actionId: "a1", device: "iphone"))  // 4: lag would be 4 → fold
        #expect(try checkpoints(l).allSatisfy { $0 == 4 })
        try l.run(.tap(.approve, actionId: "a1", device: "iphone"))  // 5
        #expect(try checkpoints(l).allSatisfy { $0 == 4 })
        #expect(try l.query { try $0.today(TodayQuery(person: "quinn", now: t0)) }.items.map(\.actionId) == ["a2"])
        #expect(try l.query { try $0.auditAction("a1", now: t0) }.state == "approved")
        try l.verifyProjections()

        // A reader opened read-only (another process) folds the same tail.
        let reader = try Ledger(path: t.path, options: Ledger.Options(readOnly: true))
        #expect(try reader.query { try $0.today(TodayQuery(person: "quinn", now: t0)) }.items.map(\.actionId) == ["a2"])
        // Reopening writable leaves a short lag alone (no catch-up commit).
        try t.reopen(options: options)
        #expect(try checkpoints(t.ledger).allSatisfy { $0 == 4 })
    }

    /// With a lag, an event a projection cannot fold is already in the log when the fold
    /// runs: the commit still lands (a projection never blocks the log), the projection is
    /// marked stale at that seq, and every query of it says so.
    @Test func aFoldThatCannotApplyAnEventMarksItStaleNamingTheSeq() throws {
        var options = Ledger.Options()
        options.projections = ProjectionRegistry([Refuses()], maxLag: 3)
        let t = try TempLedger(options: options)
        let l = t.ledger!
        try l.link("iphone")                                    // 1
        try l.run(.propose(proposal("refused")))                // 2: appended; the fold is later
        try l.run(.propose(proposal("a3")))                     // 3 → the fold fails; the commit lands
        try l.run(.propose(proposal("a4")))                     // 4: writes go on
        #expect(try l.read { try $0.head().seq } == 4)
        let q = expectLedgerError(.projectionStale) { try l.query { try $0.store("refuses") } }
        #expect(q?.code == .projectionStale && q?.message.contains("seq 2") == true)
    }
}

extension ProjectionLagTests {
    /// A projection further behind than the replay limit (an interrupted catch-up, never a
    /// commit) is refused by queries, reported stale, and caught up by a writable open.
    @Test func aProjectionPastTheReplayLimitIsStaleUntilAWritableOpen() throws {
        let t = try TempLedger()
        let l = t.ledger!
        try l.link("iphone")
        let n = Int(ProjectionRegistry.replayLimit) + 5
        _ = try l.execute(batch: (0..<n).map { CommandRequest(.propose(proposal("p\($0)")), now: t0) })
        // What a version bump's reset leaves until its catch-up runs: empty, at seq 0.
        try l.environment.write { txn in
            let meta = try #require(try l.registry.meta("today", in: txn))
            let reset = ProjectionMeta(version: meta.version, generation: meta.generation, checkpoint: 0)
            try #require(try l.registry.store(for: TodayProjection(), meta: reset, in: txn)).removeAll()
            try l.registry.saveMeta(reset, "today", in: txn)
        }
        let e = expectLedgerError(.projectionStale) { try l.query { try $0.today(TodayQuery(person: "quinn", now: t0)) } }
        #expect(e?.code == .projectionStale)
        #expect(try l.query { try $0.statuses() }.first { $0.name == "today" }?.state == "stale")
        try t.reopen()
        #expect(try t.ledger.query { try $0.today(TodayQuery(person: "quinn", now: t0, limit: 5)) }.count == n)
    }
}

/// Refuses to fold the proposal of action `refused`.
private struct Refuses: Projection {
    let name = "refuses"
    let version: UInt32 = 1
    let databases = ["seen"]
    func apply(_ event: Event, to store: ProjectionStore) throws {
        if event.actionId == "refused" { throw LedgerError(.projectionStale, "cannot fold action refused") }
        try store.put(0, key: Keys.u64(event.seq), value: [])
    }
}
