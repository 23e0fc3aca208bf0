import Testing
@testable import ActionLedger

/// A query folds the log's tail into an in-memory overlay over the stored projection. The
/// same random writes made through an overlay and made straight into LMDB must read, scan
/// (both ways, from any key, across neighbouring ranges) and digest the same.
@Suite struct ProjectionOverlayTests {
    typealias Ranges = ProjectionStoreTests.Ranges

    func entries(_ store: ProjectionStore, _ db: Int, from: [UInt8]?, reverse: Bool) throws -> [[UInt8]] {
        var out: [[UInt8]] = []
        try store.scan(db, from: from, reverse: reverse) { k, v in out.append(Array(k) + [0xEE] + Array(v)); return true }
        return out
    }

    @Test(arguments: [11 as UInt64, 12, 13, 14])
    func overlayWritesReadLikeStoredWrites(seed: UInt64) throws {
        var rng = SeededRandom(seed: seed)
        let t = try TempLedger()
        let registry = ProjectionRegistry([Ranges()])
        func randomKey() -> [UInt8] { (0..<Int.random(in: 0...2, using: &rng)).map { _ in UInt8.random(in: 0...5, using: &rng) } }
        func randomOps(_ n: Int) -> [(op: Int, db: Int, key: [UInt8], value: [UInt8])] {
            (0..<n).map { _ in
                (Int.random(in: 0...2, using: &rng), Int.random(in: 0...2, using: &rng), randomKey(), [UInt8.random(in: 0...3, using: &rng)])
            }
        }
        func run(_ ops: [(op: Int, db: Int, key: [UInt8], value: [UInt8])], on store: ProjectionStore) throws {
            for o in ops {
                switch o.op {
                case 0: try store.put(o.db, key: o.key, value: o.value)
                case 1: try store.delete(o.db, key: o.key)
                default:
                    // insert refuses a present key in both modes alike
                    let present = try store.get(o.db, key: o.key) != nil
                    if present {
                        expectLedgerError(.projectionStale) { try store.insert(o.db, key: o.key, value: o.value) }
                    } else {
                        try store.insert(o.db, key: o.key, value: o.value)
                    }
                }
            }
        }
        let base = randomOps(60), tail = randomOps(60)
        // Generation 0 gets base + tail in LMDB; generation 1 gets base in LMDB and tail in an overlay.
        try t.ledger.environment.write { txn in
            let direct = try #require(try registry.store(for: Ranges(), meta: .init(version: 1, generation: 0, checkpoint: 0), in: txn))
            let stored = try #require(try registry.store(for: Ranges(), meta: .init(version: 1, generation: 1, checkpoint: 0), in: txn))
            try run(base, on: direct)
            try run(base, on: stored)
            let baseDigest = try stored.stateDigest()
            try run(tail, on: direct)
            let overlay = ProjectionStore(txn: txn, database: stored.database, databaseCount: 3, generation: 1, name: "ranges",
                                          checkpoint: 0, overlay: ProjectionOverlay())
            try run(tail, on: overlay)
            #expect(try overlay.stateDigest() == direct.stateDigest())
            #expect(try overlay.stateDigest() != stored.stateDigest() || tail.isEmpty)
            let starts: [[UInt8]?] = [nil, [], [0], [2], [2, 3], [5, 5, 5], [9]]
            for db in 0..<3 {
                for start in starts {
                    for reverse in [false, true] {
                        #expect(try entries(overlay, db, from: start, reverse: reverse) == entries(direct, db, from: start, reverse: reverse),
                                "db \(db) from \(String(describing: start)) reverse \(reverse)")
                    }
                }
                for key in [[], [0], [3], [1, 2]] as [[UInt8]] {
                    #expect(try overlay.get(db, key: key) == direct.get(db, key: key))
                }
            }
            // The overlay wrote nothing: the stored generation still holds the base alone.
            #expect(try stored.stateDigest() == baseDigest)
        }
    }
}
