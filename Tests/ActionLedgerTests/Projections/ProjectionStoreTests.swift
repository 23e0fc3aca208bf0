import Testing
@testable import ActionLedger

/// The logical databases of a projection share one LMDB database as key ranges: each read,
/// scan and count must stay inside its own range, in both directions, and the running
/// digest must equal one recomputed from the stored entries.
@Suite struct ProjectionStoreTests {
    /// A three-database projection that folds nothing: the test writes through the store.
    struct Ranges: Projection {
        let name = "ranges"
        let version: UInt32 = 1
        let databases = ["a", "b", "c"]
        func apply(_ event: Event, to store: ProjectionStore) throws {}
    }

    func keys(_ store: ProjectionStore, _ db: Int, from start: [UInt8]? = nil, reverse: Bool = false) throws -> [[UInt8]] {
        var out: [[UInt8]] = []
        try store.scan(db, from: start, reverse: reverse) { k, _ in out.append(Array(k)); return true }
        return out
    }

    @Test func rangesStayApartAndTheDigestMatchesTheEntries() throws {
        let t = try TempLedger()
        let registry = ProjectionRegistry([Ranges()])
        try t.ledger.environment.write { txn in
            let meta = ProjectionMeta(version: 1, generation: 0, checkpoint: 0)
            let store = try #require(try registry.store(for: Ranges(), meta: meta, in: txn))
            // Database 1 ("b") sits between two non-empty neighbours.
            for k: UInt8 in [1, 5, 9] { try store.insert(0, key: [k], value: [k]) }
            for k: UInt8 in [2, 4, 6] { try store.insert(1, key: [k, 0], value: [k]) }
            for k: UInt8 in [0, 3] { try store.insert(2, key: [k], value: [k]) }
            #expect(try keys(store, 1) == [[2, 0], [4, 0], [6, 0]])
            #expect(try keys(store, 1, reverse: true) == [[6, 0], [4, 0], [2, 0]])
            #expect(try keys(store, 1, from: [3]) == [[4, 0], [6, 0]])
            #expect(try keys(store, 1, from: [5], reverse: true) == [[4, 0], [2, 0]])
            #expect(try keys(store, 1, from: [1], reverse: true) == [])
            #expect(try keys(store, 2, reverse: true) == [[3], [0]])
            #expect(try keys(store, 0, from: [9, 1]) == [])
            #expect(try (0..<3).map { try store.count($0) } == [3, 3, 2])
            #expect(try store.get(1, key: [1]) == nil)
            #expect(try store.get(0, key: [1]) == [1])
            expectLedgerError(.projectionStale) { try store.insert(1, key: [4, 0], value: [9]) }

            // put over an existing value, delete, and a no-op put: the digest is that of the entries left.
            let before = try store.entriesDigest()
            try store.put(1, key: [4, 0], value: [40])
            try store.put(1, key: [4, 0], value: [40])
            try store.delete(0, key: [5])
            try store.delete(0, key: [7])  // absent: nothing changes
            var expected = Digest.zero
            for (db, k, v) in [(0, [1], [1]), (0, [9], [9]), (1, [2, 0], [2]), (1, [4, 0], [40]), (1, [6, 0], [6]),
                               (2, [0], [0]), (2, [3], [3])] as [(Int, [UInt8], [UInt8])] {
                expected = expected.adding(ProjectionStore.entryHash(db, k, v))
            }
            #expect(try store.entriesDigest() == expected && expected != before)
            #expect(try store.count(0) == 2)
            #expect(try store.get(1, key: [4, 0]) == [40])

            try store.removeAll()
            #expect(try (0..<3).map { try store.count($0) } == [0, 0, 0])
            #expect(try store.stateDigest() == .zero)
        }
    }

    /// A store of the version-1 layout (a database per index, bookkeeping in `projections`)
    /// is rebuilt into the new layout by `migrate` and its old databases are deleted.
    @Test func theLegacyLayoutIsDroppedAndRebuiltByMigrate() throws {
        let t = try TempLedger()
        try t.ledger.execute(CommandRequest(.linkDevice(device: "iphone", person: "quinn", org: "quinn-co", label: "iPhone",
                                                        platform: .ios), now: t0))
        try t.ledger.execute(CommandRequest(.propose(proposal("a1")), now: t0))
        let legacy = ["projections", "p/today/0/items", "p/audit/1/by_action", "p/activity/0/timeline"]
        try t.ledger.environment.write { txn in
            for name in legacy {
                let db = try #require(try txn.openDatabase(name, create: true))
                try txn.put(db, key: Array("today".utf8), value: [1, 2, 3])
            }
            // What a version-1 store has: no bookkeeping where version 2 keeps it.
            for p in t.ledger.registry.projections { try t.ledger.registry.deleteMeta(p.name, rebuild: false, in: txn) }
        }
        try t.migrate()
        let left = try t.ledger.environment.read { txn in
            try legacy.filter { try txn.openDatabase($0, create: false) != nil }
        }
        #expect(left.isEmpty)
        let feed = try t.ledger.query { try $0.today(TodayQuery(person: "quinn", now: t0)) }
        #expect(feed.count == 1)
        try t.ledger.verifyProjections()
    }
}
