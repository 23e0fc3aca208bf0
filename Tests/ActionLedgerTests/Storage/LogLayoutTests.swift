import Testing
@testable import ActionLedger

/// The log's indexes share one LMDB database (`log_index`) as key ranges. A store of the
/// older layout (a database per index) is read as it is, and converted on a writable open
/// without losing an entry: the same queries, the same idempotency, a verifying chain.
@Suite struct LogLayoutTests {
    /// Rewrites `t`'s store into the older layout: each range of `log_index` copied into a
    /// database of its own name (the head record into `meta`), then `log_index` deleted.
    func downgrade(_ t: TempLedger) throws {
        try t.ledger.environment.write { txn in
            let index = try #require(try txn.openDatabase(LogDatabases.indexDatabase, create: false))
            for (i, name) in LogDatabases.indexNames.enumerated() {
                let old = try #require(try txn.openDatabase(name == "head" ? "meta" : name, create: true))
                try LogIndex(database: index, tag: UInt8(i + 1)).scan(txn) { k, v in
                    try txn.put(old, key: k, value: v)
                    return true
                }
            }
            try txn.drop(index, delete: true)
        }
    }

    func snapshot(_ l: Ledger) throws -> [String] {
        let trail = try l.query { try $0.auditAction("a1", now: t0) }.trail.map { "\($0.seq) \($0.type.name) \($0.device ?? "-")" }
        let today = try l.query { try $0.today(TodayQuery(person: "quinn", now: t0)) }.items.map(\.actionId)
        let devices = try l.read { try $0.allDevices().map(\.device) }
        let shipped = try l.read { try $0.autoShipped(person: "quinn", day: t0.utcDay) }
        return trail + today + devices + ["\(shipped)", "\(try l.read { try $0.policy().version })"]
    }

    @Test func theOlderLayoutIsReadAndThenConvertedByMigrate() throws {
        let t = try TempLedger()
        let l = t.ledger!
        try l.link("iphone")
        try l.run(.propose(proposal("a1")), commandId: "cmd-propose-a1")
        try l.run(.tap(.review, actionId: "a1", device: "iphone"))
        try l.run(.propose(proposal("a2", stakes: .low, confidence: 0.97)))  // auto-ships
        try l.run(.propose(proposal("a3")))
        let before = try snapshot(l)
        let head = try l.read { try $0.head() }
        try downgrade(t)

        // Read-only, the older layout answers as it is.
        try t.reopen(options: Ledger.Options(readOnly: true))
        #expect(try t.ledger.environment.read { try $0.openDatabase(LogDatabases.indexDatabase, create: false) } == nil)
        #expect(try t.ledger.read { try $0.head() } == head)
        #expect(try snapshot(t.ledger) == before)
        #expect(try t.ledger.verify().checked == head.seq)

        // Migrated: converted once, every entry kept.
        try t.migrate()
        let left = try t.ledger.environment.read { txn in
            try LogDatabases.indexNames.filter { try txn.openDatabase($0, create: false) != nil }
        }
        #expect(left.isEmpty)
        #expect(try t.ledger.read { try $0.head() } == head)
        #expect(try snapshot(t.ledger) == before)
        #expect(try t.ledger.verify().checked == head.seq)
        let replay = try t.ledger.run(.propose(proposal("a1")), commandId: "cmd-propose-a1")
        #expect(replay.replayed && replay.events.map(\.seq) == [2])
        try t.ledger.run(.tap(.approve, actionId: "a1", device: "iphone"))
        #expect(try t.ledger.query { try $0.auditAction("a1", now: t0) }.state == "approved")
        #expect(try t.ledger.rebuild(options: RebuildOptions(verify: true)).allSatisfy { $0.difference == nil })
    }
}
