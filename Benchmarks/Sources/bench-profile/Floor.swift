import ActionLedger
import BenchLMDB
import BenchSupport
import Foundation

/// `bench-profile floor <events>`: what LMDB alone costs to write what the engine writes.
///
/// The engine ingests `events` proposals (1000 per durable transaction). Every entry it
/// stored is then read back and written again through raw LMDB into a fresh store, 1000
/// events' share of each key range per durable transaction, in four steps that add one
/// cost at a time: the log alone (the raw baseline's shape), every entry the engine
/// wrote, plus the chain's SHA-256 per event, plus one SHA-256 per projection entry (the
/// state digests of an earlier layout), and with the chain's hash the reads and the
/// content hash no proposal can skip (its action id and command id looked up, its preview
/// hashed). Then the cheapest shape that meets the requirements (log, action and command
/// index, one Today entry) with those reads and hashes: the floor of any design, not only
/// of this one. A last step writes only the projections' final state, each range sorted
/// and appended (`MDB_APPEND`): the floor of any rebuild. No engine logic runs in the
/// replays, so each is a floor for the engine's figure, not an estimate of it.
enum Floor {
    /// One key range's entries, in key order: a logical database, or the log itself.
    struct Stream {
        let database: String
        var entries: [([UInt8], [UInt8])] = []
        var isProjection: Bool { database.hasPrefix("p/") }
        var isPostings: Bool { database.split(separator: "#")[0].hasSuffix("/postings") }  // the layout before segments
    }

    static func run(events: Int) throws {
        let path = Scratch.fresh("floor-engine")
        let engine = try ingest(path, events)
        let streams = try read(path, events: events)
        let perEvent = streams.reduce(0.0) { $0 + Double($1.entries.count) } / Double(events)
        print(String(format: "engine ingest, 1000/txn: %8.0f ev/s; %.1f stored entries per event in %d ranges",
                     engine, perEvent, streams.count))
        for s in streams {
            let n = Double(max(1, s.entries.count))
            print(String(format: "  %@: %.2f entries per event, keys of %.0f bytes, values of %.0f", s.database as NSString,
                         Double(s.entries.count) / Double(events), Double(s.entries.reduce(0) { $0 + $1.0.count }) / n,
                         Double(s.entries.reduce(0) { $0 + $1.1.count }) / n))
        }
        let log = streams.filter { $0.database == "events" || $0.database == "log_index#2" }
        // The cheapest shape that still answers what a proposal must: its log value, its
        // action's stream and its command id (idempotency), and one Today entry (its feed
        // entry as the engine stores it; the item's fields are the proposal's, read by seq).
        // Nothing else.
        let cheapest = streams.filter { ["events", "log_index#2", "log_index#5", "p/today/0#1"].contains($0.database) }
        let steps: [(String, [Stream], Costs)] = [
            ("raw: the log and one index", log, []),
            ("raw: every entry the engine writes", streams, []),
            ("  + the chain's SHA-256", streams, [.chain]),
            ("  + a SHA-256 per projection entry", streams, [.chain, .digests]),
            ("  + the lookups and content hash a proposal needs", streams, [.chain, .lookups, .contentHash]),
            ("cheapest shape (4 entries), lookups, both hashes", cheapest, [.chain, .lookups, .contentHash]),
        ]
        // fsync's cost moves from one second to the next here: every step runs in each of
        // five rounds, one after another, and the medians are compared.
        var rates = [[Double]](repeating: [], count: steps.count)
        for _ in 0..<5 {
            for (i, step) in steps.enumerated() { rates[i].append(try replay(step.1, events: events, costs: step.2)) }
        }
        let median = rates.map { $0.sorted()[$0.count / 2] }
        for (i, step) in steps.enumerated() {
            print(String(format: "%-52@ %8.0f ev/s  (engine at %.2f× this; this is %.2f× raw)", step.0 as NSString, median[i],
                         engine / median[i], median[i] / median[0]))
        }
        let bulk = try bulkLoad(streams.filter(\.isProjection), events: events)
        print(String(format: "%-40@ %8.0f ev/s", "rebuild floor: sorted appends" as NSString, bulk))
    }

    /// Ingests through the engine, durably; returns events per second. The ledger is
    /// closed on return, so its store can be read back.
    static func ingest(_ path: String, _ events: Int) throws -> Double {
        let l = try EngineSetup.ledger(at: path)
        let t = Date()
        var i = 0
        while i < events {
            let n = min(1000, events - i)
            try EngineSetup.mustSucceed(l, (i..<i + n).map {
                CommandRequest(.propose(Sample.proposal(Sample.actionId("fl", $0), person: Sample.person(0))),
                               now: Sample.base)
            })
            i += n
        }
        return Double(events) / -t.timeIntervalSinceNow
    }

    /// `bench-profile floor-rebuild`: the sorted-append floor for the 1M-event fixture's
    /// projections (`make bench`'s rebuild workload), every range of every projection.
    static func rebuild() throws {
        let path = try MillionFixture.path()
        let events = 1_000_000
        let streams = try read(path, events: 0) { $0.hasPrefix("p/") }
        let entries = streams.reduce(0) { $0 + $1.entries.count }
        let rate = try bulkLoad(streams, events: events)
        print(String(format: "rebuild floor at 1M events (%d projection entries): %.0f ev/s, %.2f s", entries, rate,
                     Double(events) / rate))
    }

    /// Every range of the databases `include` accepts holding at least a tenth as many
    /// entries as there are events: the per-transaction records (head, checkpoints) cost
    /// the same at any batch size.
    static func read(_ path: String, events: Int, include: (String) -> Bool = { _ in true }) throws -> [Stream] {
        let env = try open(path, readOnly: true)
        defer { mdb_env_close(env) }
        var txn: OpaquePointer?
        try ok(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn))
        defer { mdb_txn_abort(txn) }
        let names = try entries(txn, 1).map { String(decoding: $0.0, as: UTF8.self) }
        var streams: [Stream] = []
        for name in names where include(name) {
            var dbi: MDB_dbi = 0
            try ok(mdb_dbi_open(txn, name, 0, &dbi))
            // `events` is one range; the others are split by their range byte.
            var byRange: [String: Stream] = [:]
            for (k, v) in try entries(txn, dbi) {
                let id = name == "events" ? name : "\(name)#\(k.first ?? 0)"
                byRange[id, default: Stream(database: id)].entries.append((k, v))
            }
            streams += byRange.values.filter { $0.entries.count * 10 >= events }
        }
        return streams.sorted { $0.database < $1.database }
    }

    /// What a replay adds to the puts themselves.
    struct Costs: OptionSet {
        let rawValue: Int
        /// The chain's SHA-256 over each log value.
        static let chain = Costs(rawValue: 1)
        /// One SHA-256 per projection entry (the state digests of an earlier layout).
        static let digests = Costs(rawValue: 2)
        /// The reads a proposal cannot skip: is its action id taken, has its command id run.
        static let lookups = Costs(rawValue: 4)
        /// The content hash a tap's statement binds (SHA-256 of the 250-byte preview).
        static let contentHash = Costs(rawValue: 8)
    }

    /// Writes event `i`'s share of every stream for each event, 1000 events per durable
    /// transaction; returns events per second.
    static func replay(_ streams: [Stream], events: Int, costs: Costs) throws -> Double {
        let env = try open(Scratch.fresh("floor-replay"), readOnly: false)
        defer { mdb_env_close(env) }
        let dbis = try handles(env, streams)
        // The keys a proposal looks up before it writes: its action's and its command's.
        let probes = zip(streams, dbis).filter { ["log_index#2", "log_index#5"].contains($0.0.database) }
        let preview = [UInt8](repeating: 0x61, count: 250)
        let t = Date()
        var first = 0
        while first < events {
            let last = min(first + 1000, events)
            var txn: OpaquePointer?
            try ok(mdb_txn_begin(env, nil, 0, &txn))
            if costs.contains(.lookups) || costs.contains(.contentHash) {
                for i in first..<last {
                    if costs.contains(.contentHash) { _ = preview.withUnsafeBytes { Digest.sha256($0) } }
                    guard costs.contains(.lookups) else { continue }
                    for (s, dbi) in probes where i < s.entries.count { try get(txn, dbi, s.entries[i].0) }
                }
            }
            for (s, dbi) in zip(streams, dbis) {
                let n = s.entries.count
                for j in first * n / events..<last * n / events {
                    let (k, v) = s.entries[j]
                    if costs.contains(.chain) && s.database == "events" { _ = v.withUnsafeBytes { Digest.sha256(.zero, $0) } }
                    if costs.contains(.digests) && s.isProjection { _ = (k + v).withUnsafeBytes { Digest.sha256($0) } }
                    try put(txn, dbi, k, v, s.database == "events" ? UInt32(MDB_APPEND) : 0)
                }
            }
            try ok(mdb_txn_commit(txn))
            first = last
        }
        return Double(events) / -t.timeIntervalSinceNow
    }

    /// A lookup of `k` that finds nothing (the key is not written yet), as a new id's check.
    static func get(_ txn: OpaquePointer?, _ dbi: MDB_dbi, _ k: [UInt8]) throws {
        try k.withUnsafeBytes { kb in
            var key = MDB_val(mv_size: kb.count, mv_data: UnsafeMutableRawPointer(mutating: kb.baseAddress))
            var value = MDB_val()
            let rc = mdb_get(txn, dbi, &key, &value)
            guard rc == MDB_NOTFOUND || rc == 0 else { throw FloorError(rc: rc) }
        }
    }

    /// The projections' final state, range after range in key order with `MDB_APPEND`,
    /// committed every 100 000 entries.
    static func bulkLoad(_ streams: [Stream], events: Int) throws -> Double {
        let env = try open(Scratch.fresh("floor-bulk"), readOnly: false)
        defer { mdb_env_close(env) }
        let dbis = try handles(env, streams)
        let t = Date()
        var txn: OpaquePointer?
        try ok(mdb_txn_begin(env, nil, 0, &txn))
        var written = 0
        for (s, dbi) in zip(streams, dbis) {
            for (k, v) in s.entries {
                try put(txn, dbi, k, v, UInt32(s.isPostings ? MDB_APPENDDUP : MDB_APPEND))
                written += 1
                if written % 100_000 == 0 {
                    try ok(mdb_txn_commit(txn))
                    try ok(mdb_txn_begin(env, nil, 0, &txn))
                }
            }
        }
        try ok(mdb_txn_commit(txn))
        return Double(events) / -t.timeIntervalSinceNow
    }

    static func open(_ path: String, readOnly: Bool) throws -> OpaquePointer {
        var env: OpaquePointer?
        try ok(mdb_env_create(&env))
        try ok(mdb_env_set_maxdbs(env, 64))
        try ok(mdb_env_set_mapsize(env, 4 << 30))
        try ok(mdb_env_open(env, path, UInt32(MDB_NOSUBDIR | MDB_NOTLS) | (readOnly ? UInt32(MDB_RDONLY) : 0), 0o644))
        return env!
    }

    static func handles(_ env: OpaquePointer, _ streams: [Stream]) throws -> [MDB_dbi] {
        var txn: OpaquePointer?
        try ok(mdb_txn_begin(env, nil, 0, &txn))
        let dbis = try streams.map { s in
            var dbi: MDB_dbi = 0
            // Posting lists are key-only sorted duplicates, as the engine stores them.
            let flags = s.isPostings ? UInt32(MDB_CREATE | MDB_DUPSORT | MDB_DUPFIXED) : UInt32(MDB_CREATE)
            try ok(mdb_dbi_open(txn, String(s.database.split(separator: "#")[0]), flags, &dbi))
            return dbi
        }
        try ok(mdb_txn_commit(txn))
        return dbis
    }

    static func entries(_ txn: OpaquePointer?, _ dbi: MDB_dbi) throws -> [([UInt8], [UInt8])] {
        var cursor: OpaquePointer?
        try ok(mdb_cursor_open(txn, dbi, &cursor))
        defer { mdb_cursor_close(cursor) }
        var out: [([UInt8], [UInt8])] = []
        var k = MDB_val(), v = MDB_val()
        var rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST)
        while rc == 0 {
            out.append((Array(UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size)),
                        Array(UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))))
            rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)
        }
        guard rc == MDB_NOTFOUND else { throw FloorError(rc: rc) }
        return out
    }

    static func put(_ txn: OpaquePointer?, _ dbi: MDB_dbi, _ k: [UInt8], _ v: [UInt8], _ flags: UInt32) throws {
        try k.withUnsafeBytes { kb in
            try v.withUnsafeBytes { vb in
                var key = MDB_val(mv_size: kb.count, mv_data: UnsafeMutableRawPointer(mutating: kb.baseAddress))
                var value = MDB_val(mv_size: vb.count, mv_data: UnsafeMutableRawPointer(mutating: vb.baseAddress))
                try ok(mdb_put(txn, dbi, &key, &value, flags))
            }
        }
    }

    struct FloorError: Error, CustomStringConvertible {
        let rc: Int32
        var description: String { String(cString: mdb_strerror(rc)) }
    }

    static func ok(_ rc: Int32) throws {
        guard rc == 0 else { throw FloorError(rc: rc) }
    }
}
