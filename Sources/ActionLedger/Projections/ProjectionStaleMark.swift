/// A projection that cannot fold an event is marked stale instead of failing the write
/// that reached it (Specs/queries.md, "A projection that cannot fold"): the log goes on
/// taking events, queries of that projection answer `projection_stale` naming the seq,
/// and `ledger rebuild --projection NAME` builds it afresh and clears the mark.
///
/// The mark lives in the log's `meta` index under `projection/NAME#stale`: the seq it
/// could not fold (8 bytes BE) then the reason (UTF-8).
struct ProjectionStaleMark: Sendable, Equatable {
    var seq: UInt64
    var reason: String

    static func key(_ name: String) -> [UInt8] { Array(("projection/" + name + "#stale").utf8) }

    static func read(_ name: String, _ meta: LogIndex, in txn: Transaction) throws -> ProjectionStaleMark? {
        try meta.withValue(txn, key: key(name)) { b in
            guard b.count >= 8 else { throw LedgerError(.corruptEvent, "the stale mark of projection \(name) is \(b.count) bytes") }
            return ProjectionStaleMark(seq: Keys.readU64(b), reason: String(decoding: b[8...], as: UTF8.self))
        }
    }

    func write(_ name: String, _ meta: LogIndex, in txn: Transaction) throws {
        try meta.put(txn, key: Self.key(name), value: Keys.u64(seq) + Array(reason.utf8.prefix(1024)))
    }

    static func clear(_ name: String, _ meta: LogIndex, in txn: Transaction) throws {
        try meta.delete(txn, key: key(name))
    }
}

extension ProjectionRegistry {
    /// The stale marks of every projection, in registry order.
    func staleMarks(_ meta: LogIndex, in txn: Transaction) throws -> [ProjectionStaleMark?] {
        try projections.map { try ProjectionStaleMark.read($0.name, meta, in: txn) }
    }

    /// Refuses a query of a projection marked stale.
    func requireNotStale(_ name: String, in txn: Transaction) throws {
        guard let db = try metaDB(txn), let mark = try ProjectionStaleMark.read(name, db, in: txn) else { return }
        throw LedgerError(.projectionStale, "projection \(name) cannot fold seq \(mark.seq) (\(mark.reason)); the log "
            + "goes on: run `ledger rebuild --projection \(name)`", details: ["seq": .number(Double(mark.seq)), "projection": .string(name)])
    }
}
