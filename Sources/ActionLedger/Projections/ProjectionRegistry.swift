/// The projections a ledger maintains, and their bookkeeping in the `projections` database.
public struct ProjectionRegistry: Sendable {
    /// Inline projections, updated in the same write transaction as each append.
    public let projections: [any Projection]

    public init(_ projections: [any Projection]) {
        self.projections = projections
    }

    /// The bookkeeping lives in the log's `meta` database, under `projection/NAME`: the
    /// appending transaction writes the log head there anyway, so recording every
    /// projection's checkpoint and digest dirties no B-tree of its own.
    static let metaDatabase = "meta"

    static func metaKey(_ name: String, rebuild: Bool) -> [UInt8] {
        Array(("projection/" + name + (rebuild ? "#rebuild" : "")).utf8)
    }

    func metaDB(_ txn: Transaction) throws -> Database? {
        try txn.openDatabase(ProjectionRegistry.metaDatabase, create: !txn.isReadOnly)
    }

    /// The stored bookkeeping of `name` (or of its rebuild, with `rebuild`).
    public func meta(_ name: String, rebuild: Bool = false, in txn: Transaction) throws -> ProjectionMeta? {
        guard let db = try metaDB(txn) else { return nil }
        return try txn.withValue(db, key: Self.metaKey(name, rebuild: rebuild)) { try ProjectionMeta(decoding: $0) }
    }

    func saveMeta(_ meta: ProjectionMeta, _ name: String, rebuild: Bool = false, in txn: Transaction) throws {
        guard let db = try metaDB(txn) else { throw LedgerError(.readOnly, "cannot record projection state read-only") }
        try txn.put(db, key: Self.metaKey(name, rebuild: rebuild), value: meta.encoded)
    }

    func deleteMeta(_ name: String, rebuild: Bool, in txn: Transaction) throws {
        guard let db = try metaDB(txn) else { return }
        try txn.delete(db, key: Self.metaKey(name, rebuild: rebuild))
    }

    /// Opens `projection`'s databases of `generation` as a store positioned at `meta`.
    func store(for projection: any Projection, meta: ProjectionMeta, in txn: Transaction) throws -> ProjectionStore? {
        let full = ProjectionMeta.databaseName(projection.name, generation: meta.generation)
        guard let db = try txn.openDatabase(full, create: !txn.isReadOnly) else { return nil }
        return ProjectionStore(txn: txn, database: db, databaseCount: projection.databases.count,
                               generation: meta.generation, name: projection.name, checkpoint: meta.checkpoint,
                               digest: meta.digest)
    }

    /// The live stores of every projection, creating empty ones the first time.
    func liveStores(in txn: Transaction) throws -> [ProjectionStore] {
        try projections.map { p in
            let meta = try self.meta(p.name, in: txn)
                ?? ProjectionMeta(version: p.version, generation: 0, checkpoint: 0, digest: .zero)
            guard let store = try store(for: p, meta: meta, in: txn) else {
                throw LedgerError(.projectionStale, "projection \(p.name) has no databases yet")
            }
            return store
        }
    }

    /// The live store of one projection for a query, refusing one that is stale.
    public func readStore(_ name: String, in txn: Transaction, head: UInt64) throws -> ProjectionStore {
        guard let p = projections.first(where: { $0.name == name }) else {
            throw LedgerError(.invalidInput, "no projection named \(name)")
        }
        guard let meta = try meta(name, in: txn), let store = try store(for: p, meta: meta, in: txn) else {
            if head == 0, let empty = try emptyStore(p, txn) { return empty }
            throw LedgerError(.projectionStale, "projection \(name) was never built: run `ledger rebuild --projection \(name)`")
        }
        guard meta.version == p.version, meta.checkpoint == head else {
            throw LedgerError(.projectionStale, "projection \(name) is at seq \(meta.checkpoint) (version \(meta.version)) "
                + "but the log is at \(head) (version \(p.version) expected): run `ledger rebuild --projection \(name)`")
        }
        return store
    }

    private func emptyStore(_ p: any Projection, _ txn: Transaction) throws -> ProjectionStore? {
        try store(for: p, meta: ProjectionMeta(version: p.version, generation: 0, checkpoint: 0, digest: .zero), in: txn)
    }

    /// Applies `event` to `store`, refusing an event out of order.
    static func apply(_ event: Event, _ projection: any Projection, _ store: ProjectionStore) throws {
        guard event.seq == store.checkpoint + 1 else {
            throw LedgerError(.projectionStale, "projection \(store.name) is at seq \(store.checkpoint); "
                + "it cannot apply seq \(event.seq)")
        }
        do {
            try projection.apply(event, to: store)
        } catch let error as LedgerError {
            throw LedgerError(error.code, "projection \(store.name) cannot apply seq \(event.seq): \(error.message)")
        }
        store.checkpoint = event.seq
    }
}
