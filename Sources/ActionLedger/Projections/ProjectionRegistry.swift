/// The projections a ledger maintains, and their bookkeeping in the log's `meta` database.
///
/// Projections trail the log by fewer than ``maxLag`` events. A commit appends the events
/// and the log's own indexes only; the commit that would leave a projection `maxLag` or
/// more events behind also folds the whole tail into it, in the same transaction. So most
/// commits write three B-trees instead of nine, and the projections' index pages are
/// written once per fold rather than once per commit. Queries fold the tail (at most
/// `maxLag - 1` events) into an in-memory ``ProjectionOverlay`` over their read snapshot,
/// so every answer is exactly the state at the log head.
public struct ProjectionRegistry: Sendable {
    /// The projections, folded in this order.
    public let projections: [any Projection]
    /// A commit folds the log's tail into the projections once they would trail it by this
    /// many events. 1 folds every commit (projections always at the head).
    public var maxLag: UInt64
    /// The longest tail a query replays: beyond it the projection is reported stale (a
    /// projection that far behind was left by an interrupted catch-up or another build).
    public static let replayLimit: UInt64 = 10_000

    /// - parameters:
    ///   - projections: folded in this order; names must be unique.
    ///   - maxLag: 1…``replayLimit``. 32 by default: a fold every 32 events keeps the tail a
    ///     query folds in memory short, while most commits write no projection page.
    public init(_ projections: [any Projection], maxLag: UInt64 = 32) {
        precondition(maxLag >= 1 && maxLag <= ProjectionRegistry.replayLimit, "maxLag must be 1…\(ProjectionRegistry.replayLimit)")
        self.projections = projections
        self.maxLag = maxLag
    }

    /// The bookkeeping lives in the log's `meta` index, under `projection/NAME`: the
    /// appending transaction writes the log head there anyway, so recording every
    /// projection's checkpoint and digest dirties no B-tree of its own.
    static func metaKey(_ name: String, rebuild: Bool) -> [UInt8] {
        Array(("projection/" + name + (rebuild ? "#rebuild" : "")).utf8)
    }

    func metaDB(_ txn: Transaction) throws -> LogIndex? {
        try LogDatabases.open(txn)?.meta
    }

    /// Every projection's stored checkpoint (0 when never recorded), read through the
    /// log's already open `meta` index: every commit reads these.
    func checkpoints(_ meta: LogIndex, in txn: Transaction) throws -> [UInt64] {
        try projections.map { p in
            try meta.withValue(txn, key: Self.metaKey(p.name, rebuild: false)) { try ProjectionMeta(decoding: $0).checkpoint } ?? 0
        }
    }

    /// The stored bookkeeping of `name` (or of its rebuild, with `rebuild`).
    public func meta(_ name: String, rebuild: Bool = false, in txn: Transaction) throws -> ProjectionMeta? {
        guard let db = try metaDB(txn) else { return nil }
        return try db.withValue(txn, key: Self.metaKey(name, rebuild: rebuild)) { try ProjectionMeta(decoding: $0) }
    }

    func saveMeta(_ meta: ProjectionMeta, _ name: String, rebuild: Bool = false, in txn: Transaction) throws {
        guard let db = try metaDB(txn) else { throw LedgerError(.readOnly, "cannot record projection state read-only") }
        try db.put(txn, key: Self.metaKey(name, rebuild: rebuild), value: meta.encoded)
    }

    func deleteMeta(_ name: String, rebuild: Bool, in txn: Transaction) throws {
        guard let db = try metaDB(txn) else { return }
        try db.delete(txn, key: Self.metaKey(name, rebuild: rebuild))
    }

    /// Opens `projection`'s databases of `generation` as a store positioned at `meta`.
    /// - parameter log: the log's databases when the caller has them open (the writer's
    ///   fold): opening them again costs eight handle lookups per store.
    func store(for projection: any Projection, meta: ProjectionMeta, in txn: Transaction,
               log: LogDatabases? = nil) throws -> ProjectionStore? {
        let full = ProjectionMeta.databaseName(projection.name, generation: meta.generation)
        guard let db = try txn.openDatabase(full, create: !txn.isReadOnly) else { return nil }
        var postings: Database?
        if !projection.postings.isEmpty {
            postings = try txn.openDatabase(full + "/segments", create: !txn.isReadOnly)
            // A read-only snapshot of a store whose postings were never written: no lists yet.
            if postings == nil, !txn.isReadOnly { return nil }
        }
        return ProjectionStore(txn: txn, database: db, databaseCount: projection.databases.count,
                               generation: meta.generation, name: projection.name, checkpoint: meta.checkpoint,
                               postingDatabase: postings,
                               log: try (log ?? LogDatabases.open(txn)).map { LogReader(txn: txn, dbs: $0) })
    }

    /// Deletes `projection`'s posting databases of the layout before segments
    /// (`p/NAME/GEN/postings`, sorted duplicates), both generations: a store of that layout
    /// is rebuilt into `segments` (a version bump), and its old lists would only hold pages.
    static func dropDuplicatePostings(_ projection: any Projection, _ txn: Transaction) throws {
        for generation: UInt8 in 0...1 {
            let name = ProjectionMeta.databaseName(projection.name, generation: generation) + "/postings"
            if let db = try txn.openDatabase(name, create: false, duplicates: true) { try txn.drop(db, delete: true) }
        }
    }

    /// The live stores of every projection, creating empty ones the first time.
    func liveStores(in txn: Transaction, log: LogDatabases? = nil) throws -> [ProjectionStore] {
        try projections.map { p in
            let meta = try self.meta(p.name, in: txn)
                ?? ProjectionMeta(version: p.version, generation: 0, checkpoint: 0)
            guard let store = try store(for: p, meta: meta, in: txn, log: log) else {
                throw LedgerError(.projectionStale, "projection \(p.name) has no databases yet")
            }
            return store
        }
    }

    /// The stored state of one projection for a query, at its checkpoint (the log's tail
    /// not folded in), refusing one of another version or too far behind.
    func storedStore(_ name: String, in txn: Transaction, head: UInt64) throws -> (any Projection, ProjectionStore) {
        guard let p = projections.first(where: { $0.name == name }) else {
            throw LedgerError(.invalidInput, "no projection named \(name)")
        }
        guard let meta = try meta(name, in: txn), let store = try store(for: p, meta: meta, in: txn) else {
            if head == 0, let empty = try emptyStore(p, txn) { return (p, empty) }
            throw LedgerError(.projectionStale, "projection \(name) was never built: run `ledger rebuild --projection \(name)`")
        }
        try requireNotStale(name, in: txn)
        guard meta.version == p.version else {
            throw LedgerError(.projectionStale, "projection \(name) is version \(meta.version), this build reads version "
                + "\(p.version): run `ledger migrate` to convert the store")
        }
        guard meta.checkpoint <= head, head - meta.checkpoint <= Self.replayLimit else {
            throw LedgerError(.projectionStale, "projection \(name) is at seq \(meta.checkpoint) (version \(meta.version)) "
                + "but the log is at \(head) (version \(p.version) expected): run `ledger rebuild --projection \(name)`")
        }
        return (p, store)
    }

    /// The state of one projection at the log head for a query: its stored state with the
    /// log's tail folded into an in-memory overlay.
    func readStore(_ name: String, reader: LogReader, head: UInt64) throws -> ProjectionStore {
        let (p, stored) = try storedStore(name, in: reader.txn, head: head)
        guard stored.checkpoint < head else { return stored }
        let replay = ProjectionStore(txn: reader.txn, database: stored.database, databaseCount: stored.databaseCount,
                                     generation: stored.generation, name: stored.name, checkpoint: stored.checkpoint,
                                     overlay: ProjectionOverlay(), postingDatabase: stored.postingDatabase, log: reader)
        try Self.foldTail(p, replay, reader, through: head)
        return replay
    }

    /// Folds the log's tail into `p`'s live state and records it (in a write transaction):
    /// what a commit's fold does, for a comparison that needs the live state at the head.
    func foldLive(_ p: any Projection, _ reader: LogReader, through head: UInt64) throws {
        guard let meta = try meta(p.name, in: reader.txn), meta.version == p.version, meta.checkpoint < head,
              let store = try store(for: p, meta: meta, in: reader.txn) else { return }
        try Self.foldTail(p, store, reader, through: head)
        try store.flushPostings()
        var updated = meta
        updated.checkpoint = store.checkpoint
        try saveMeta(updated, p.name, in: reader.txn)
    }

    /// Folds the events after `store`'s checkpoint, through `head`, into it.
    static func foldTail(_ p: any Projection, _ store: ProjectionStore, _ reader: LogReader, through head: UInt64) throws {
        guard store.checkpoint < head else { return }
        try reader.forEachView(from: store.checkpoint + 1) { view, decode in
            try apply(view, p, store, decode: decode)
            return view.seq < head
        }
        guard store.checkpoint == head else {
            throw LedgerError(.projectionStale, "projection \(store.name) reached seq \(store.checkpoint), not the head \(head)")
        }
    }

    private func emptyStore(_ p: any Projection, _ txn: Transaction) throws -> ProjectionStore? {
        try store(for: p, meta: ProjectionMeta(version: p.version, generation: 0, checkpoint: 0), in: txn)
    }

    /// `error` reworded, its details naming the projection and the seq (`verify --deep`
    /// reports which projection a fold of the stored state failed in): a fold's failure as
    /// queries.md states it: `projection_stale` naming the projection and
    /// the seq. A command's refusal raised inside a fold (`unknown_device` for a tap by a
    /// device the fold has no record of: damaged bytes, or a bug) is no refusal of anything
    /// the caller asked, so it becomes `projection_stale` with the refusal's code as
    /// `cause`; bytes that do not decode stay `corrupt_event`, and storage, integrity and
    /// lock failures keep their codes.
    static func naming(_ projection: String, _ seq: UInt64, _ error: LedgerError, _ message: String) -> LedgerError {
        var details = error.details
        details["projection"] = .string(projection)
        details["seq"] = .number(Double(seq))
        let kept: [LedgerError.Code] = [.corruptEvent, .projectionStale, .storage, .integrityFailure, .readOnly, .busy, .migrationRequired]
        guard kept.contains(error.code) else {
            details["cause"] = .string(error.code.rawValue)
            return LedgerError(.projectionStale, message, details: details)
        }
        return LedgerError(error.code, message, details: details)
    }

    /// Applies an event read in place to `store`, refusing one out of order.
    static func apply(_ view: EventView, _ projection: any Projection, _ store: ProjectionStore,
                      decode: () throws -> Event) throws {
        guard view.seq == store.checkpoint + 1 else {
            throw LedgerError(.projectionStale, "projection \(store.name) is at seq \(store.checkpoint); "
                + "it cannot apply seq \(view.seq)", details: ["projection": .string(store.name)])
        }
        do {
            try projection.apply(view, to: store, decode: decode)
        } catch let error as LedgerError {
            throw naming(store.name, view.seq, error, "projection \(store.name) cannot apply seq \(view.seq): \(error.message)")
        }
        store.checkpoint = view.seq
    }

    /// Applies `event` to `store`, refusing an event out of order.
    static func apply(_ event: Event, _ projection: any Projection, _ store: ProjectionStore) throws {
        guard event.seq == store.checkpoint + 1 else {
            throw LedgerError(.projectionStale, "projection \(store.name) is at seq \(store.checkpoint); "
                + "it cannot apply seq \(event.seq)", details: ["projection": .string(store.name)])
        }
        do {
            try projection.apply(event, to: store)
        } catch let error as LedgerError {
            throw naming(store.name, event.seq, error, "projection \(store.name) cannot apply seq \(event.seq): \(error.message)")
        }
        store.checkpoint = event.seq
    }
}
