import Testing
@testable import ActionLedger

/// Random command sequences (three long ones, 200 short ones in fresh ledgers) → the
/// projections, read at the head with their lag folded in, answer every query as an
/// independent reference model does and equal a full rebuild (by digest, entry by entry).
@Suite struct ProjectionPropertyTests {
    /// `maxLag` 1 folds every commit; 997 leaves up to 996 events for each query to fold
    /// in memory (over deletes, overwrites and scans of the stored state).
    @Test(arguments: [(1 as UInt64, 1 as UInt64), (2, 32), (3, 997)])
    func inlineEqualsRebuildEqualsReferenceModel(seed: UInt64, maxLag: UInt64) throws {
        var options = Ledger.Options()
        options.projections = ProjectionRegistry(ProjectionRegistry.standard.projections, maxLag: maxLag)
        let t = try TempLedger(options: options)
        let l = t.ledger!
        var work = RandomWorkload(seed: seed)
        _ = try l.execute(group: work.setUp())
        var accepted = 0
        for _ in 0..<60 {
            let results = try l.execute(group: (0..<Int.random(in: 1...80, using: &work.rng)).map { _ in work.next() })
            accepted += results.filter { (try? $0.get()) != nil }.count
        }
        #expect(accepted > 1200, "the workload should be mostly valid")

        let model = try check(l, work)
        #expect(model.autoShips.count > 10 && model.devices.values.contains { $0.revokedAt != nil } && model.policyVersion > 0)
    }

    /// Many short sequences, each in a fresh ledger: every one checked the same way.
    @Test(arguments: 0..<8)
    func manyShortSequences(batch: Int) throws {
        var stats = (events: 0, autoShips: 0, policies: 0)
        for n in 0..<25 {
            let t = try TempLedger()
            var work = RandomWorkload(seed: UInt64(1000 + batch * 25 + n))
            _ = try t.ledger.execute(group: work.setUp())
            _ = try t.ledger.execute(group: (0..<Int.random(in: 10...60, using: &work.rng)).map { _ in work.next() })
            let model = try check(t.ledger, work)
            stats.events += model.timeline.values.map(\.count).reduce(0, +)
            stats.autoShips += model.autoShips.count
            stats.policies += Int(model.policyVersion)
        }
        #expect(stats.events > 25 * 20 && stats.autoShips > 0 && stats.policies > 0)
    }

    /// Inline = rebuild (digests and entries) and every query = the reference model.
    @discardableResult
    private func check(_ l: Ledger, _ work: RandomWorkload) throws -> ReferenceModel {
        var model = ReferenceModel()
        try l.read { r in try r.forEach { model.fold($0.event); return true } }
        let head = try l.read { try $0.head().seq }

        // Every query equals the reference model, at several instants.
        let end = work.now
        for now in [end.adding(milliseconds: -2 * Timestamp.hour), end, end.adding(milliseconds: 3 * Timestamp.hour)] {
            for person in work.persons { try compareToday(l, model, person, now) }
            let window = TimeWindow.last(Timestamp.day, before: now)
            let report = try l.query { try $0.autoShipped(in: window) }
            #expect(report.items.map(\.seq) == model.autoShipped(from: window.from, to: window.to))
        }
        let everything = try l.query { try $0.autoShipped(in: .all, person: "mia") }
        #expect(everything.items.map(\.seq) == model.autoShipped(from: TimeWindow.all.from, to: TimeWindow.all.to, person: "mia"))

        for (id, lines) in model.trails {
            let trail = try l.query { try $0.auditAction(id, now: end) }
            let got = trail.trail.map { ReferenceModel.Line(seq: $0.seq, type: $0.type, actor: $0.actor, device: $0.device,
                                                             policyVersion: $0.policyVersion) }
            #expect(got == lines, "trail of \(id)")
        }
        let devices = try l.query { try $0.devices() }
        #expect(devices.count == model.devices.count)
        for d in devices {
            let m = model.devices[d.device]
            #expect(m == ReferenceModel.Device(person: d.person, label: d.label, platform: d.platform, revokedAt: d.revokedAt,
                                               lastSeen: d.lastSeen, taps: d.taps), "device \(d.device)")
        }
        for person in work.persons {
            let page = try l.query { try $0.activity(person: person, limit: 100_000) }
            let expected = model.timeline[person]!.sorted { ($0.at, $0.seq) < ($1.at, $1.seq) }
            #expect(page.items.map(\.seq) == expected.map(\.seq))
            let taps = try l.query { try $0.activity(person: person, types: [.actionApproved, .deviceRevoked], limit: 100_000) }
            #expect(taps.items.map(\.seq) == expected.filter { $0.type == .actionApproved || $0.type == .deviceRevoked }.map(\.seq))
        }
        let byActor = try l.query { try $0.audit(.actor("system:policy"), limit: 100_000) }
        #expect(byActor.entries.map(\.seq) == model.trails.values.flatMap { $0 }.filter { $0.actor == "system:policy" }
            .map(\.seq).sorted())

        // The live state at the head (stored, plus the log's tail folded in memory as queries
        // do) = a shadow rebuild's = the digest recomputed from the entries once folded.
        // Checked after the queries, because the verifying rebuild folds the live tail.
        let live = try l.environment.read { txn in
            try l.registry.projections.map { p in
                let store = try l.registry.readStore(p.name, reader: LogReader(txn: txn, dbs: l.dbs), head: head)
                return (try l.registry.meta(p.name, in: txn)!, try store.entriesDigest(), try store.stateDigest())
            }
        }
        let verified = try l.rebuild(options: RebuildOptions(verify: true))
        for ((meta, _, full), r) in zip(live, verified) {
            #expect(meta.checkpoint <= head && head - meta.checkpoint < l.registry.maxLag)
            #expect(r.difference == nil, "\(r.projection): \(String(describing: r.difference))")
            #expect(r.digest == full && r.liveDigest == full)
        }
        let rebuilt = try l.rebuild()
        for ((meta, entries, _), r) in zip(live, rebuilt) {
            #expect(r.swapped && r.generation != meta.generation && r.digest == entries)
        }
        return model
    }

    private func compareToday(_ l: Ledger, _ model: ReferenceModel, _ person: String, _ now: Timestamp) throws {
        let feed = try l.query { try $0.today(TodayQuery(person: person, now: now, limit: 1000)) }
        let expected = model.today(person, now: now)
        #expect(feed.count == expected.count)
        #expect(feed.items.map(\.actionId) == expected.map(\.0), "order of \(person)'s feed at \(now)")
        #expect(feed.items.map(\.stakes) == expected.map(\.1))
        #expect(feed.items.map(\.nextTap.rawValue) == expected.map(\.2))
        #expect(feed.items.map(\.tapsDone) == expected.map(\.3))
        #expect(Dictionary(uniqueKeysWithValues: feed.drafts.map { ($0.specialist, $0.count) }) == model.drafts(person, now: now))
        let window = TimeWindow.last(Timestamp.day, before: now)
        #expect(feed.autoShipped.count == model.autoShipped(from: window.from, to: window.to, person: person).count)
    }
}
