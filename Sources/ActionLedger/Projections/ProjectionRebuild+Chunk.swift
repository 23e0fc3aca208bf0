import Foundation

/// A rebuild's chunks: folded in memory in read snapshots, written in one transaction each.
extension ShadowBuild {
    /// What one chunk folded: per projection, its state's changes in memory and the seqs it spans.
    struct Chunk {
        var folds: [(projection: any Projection, overlay: ProjectionOverlay, fresh: Bool, from: UInt64, to: UInt64)] = []
        var applied: UInt64 = 0
        /// The log's head as the fold's snapshot saw it.
        var head: UInt64 = 0
    }

    /// Folds the next chunk of the log into memory. The projections are split into one
    /// group per core (by ``Projection/foldCost``), each group folded on its own thread in
    /// its own read snapshot, reading the log itself: the groups share nothing but the log,
    /// whose events up to the first snapshot's head are the same in every snapshot.
    func fold(_ pending: [any Projection], _ options: RebuildOptions,
              _ report: (UInt64, UInt64, UInt64) -> Void) throws -> Chunk {
        let groups = Self.partition(pending, into: min(ProcessInfo.processInfo.activeProcessorCount, pending.count))
        let budget = FoldBudget(limit: options.memoryBudget, groups: groups.count)
        guard groups.count > 1 else { return try foldGroup(pending, options, budget, 0, through: nil, report) }
        let head = try environment.read { try LogReader(txn: $0, dbs: dbs).head().seq }
        let others = OtherThreads(count: groups.count - 1)
        let build = self
        for (i, group) in groups.dropFirst().enumerated() {
            others.start(i) { try build.foldGroup(group, options, budget, i + 1, through: head) { _, _, _ in } }
        }
        let mine = Result { try foldGroup(groups[0], options, budget, 0, through: head, report) }
        // Every thread is waited for, failed or not (none may read past this call), and of
        // several failures the one at the lowest seq is reported: the first event the log
        // cannot fold, whichever thread met it, as a fold on one thread would report it.
        let results = [mine] + others.wait()
        if let failure = Self.earliestFailure(results, order: pending.map(\.name)) { throw failure }
        var chunk = try mine.get()
        for result in results.dropFirst() {
            let theirs = try result.get()
            chunk.folds += theirs.folds
            chunk.applied = max(chunk.applied, theirs.applied)
            chunk.head = max(chunk.head, theirs.head)
        }
        // In the order asked for, whichever thread folded them.
        let order = Dictionary(uniqueKeysWithValues: pending.enumerated().map { ($1.name, $0) })
        chunk.folds.sort { order[$0.projection.name]! < order[$1.projection.name]! }
        return chunk
    }

    /// Of the failed groups' errors, the one naming the lowest seq, and at one seq the
    /// projection asked for first (the one a fold on one thread applies first); an error
    /// naming no seq (storage) only when no error names one.
    static func earliestFailure(_ results: [Result<Chunk, any Error>], order: [String]) -> (any Error)? {
        func rank(_ e: any Error) -> (Double, Int) {
            guard let e = e as? LedgerError, case .number(let seq)? = e.details["seq"] else { return (.infinity, .max) }
            guard case .string(let name)? = e.details["projection"] else { return (seq, .max) }
            return (seq, order.firstIndex(of: name) ?? .max)
        }
        let errors = results.compactMap { r -> (any Error)? in if case .failure(let e) = r { return e } else { return nil } }
        return errors.min { rank($0) < rank($1) }
    }

    /// Splits `projections` into `count` groups of about equal ``Projection/foldCost``
    /// (greedy, costliest first).
    static func partition(_ projections: [any Projection], into count: Int) -> [[any Projection]] {
        guard count > 1 else { return [projections] }
        var groups = Array(repeating: [any Projection](), count: count), load = Array(repeating: 0, count: count)
        for p in projections.sorted(by: { $0.foldCost > $1.foldCost }) {
            let i = load.indices.min { load[$0] < load[$1] }!
            groups[i].append(p)
            load[i] += p.foldCost
        }
        return groups.filter { !$0.isEmpty }
    }

    /// Folds `pending` into memory in one read snapshot: each shadow's changes land in an
    /// overlay over its stored state (over nothing for a shadow still empty, so an action
    /// proposed and decided within the chunk never reaches LMDB). Stops at `through` (else
    /// the snapshot's head), after ``RebuildOptions/batchSize`` events, or when what every
    /// group holds reaches ``RebuildOptions/memoryBudget`` (`budget`; this group is `slot`).
    func foldGroup(_ pending: [any Projection], _ options: RebuildOptions, _ budget: FoldBudget, _ slot: Int, through bound: UInt64?,
                   _ report: (UInt64, UInt64, UInt64) -> Void) throws -> Chunk {
        try environment.read { txn in
            let reader = LogReader(txn: txn, dbs: dbs)
            let head = min(try reader.head().seq, bound ?? .max)
            var stores: [(any Projection, ProjectionStore, Bool)] = []
            for p in pending {
                let meta = try shadowMeta(p, txn)
                let overlay = ProjectionOverlay(), fresh = meta.checkpoint == 0
                var database = dbs.events, postings: Database?
                if !fresh {
                    guard let stored = try registry.store(for: p, meta: meta, in: txn) else {
                        throw LedgerError(.projectionStale, "the rebuild databases of \(p.name) vanished: another process reset them")
                    }
                    database = stored.database
                    postings = stored.postingDatabase
                }
                stores.append((p, ProjectionStore(txn: txn, database: database, databaseCount: p.databases.count,
                                                  generation: meta.generation, name: p.name, checkpoint: meta.checkpoint,
                                                  overlay: overlay, memoryOnly: fresh, postingDatabase: postings, log: reader), fresh))
            }
            var chunk = Chunk()
            chunk.head = head
            let from = stores.map(\.1.checkpoint)
            guard let low = from.min(), low < head else {
                chunk.folds = zip(stores, from).map { ($0.0, $0.1.overlay!, $0.2, $1, $0.1.checkpoint) }
                return chunk
            }
            var seen: UInt64 = 0
            // The stores unretained (`stores` holds them) and the projections borrowed from a
            // buffer of their own: each event visits every one, and a reference count or an
            // existential's copy per visit stalls the fold on its memory reads (a buffer of
            // (projection, store) pairs copied the pair, existential and all, every time).
            let projections = stores.map(\.0), unretained = stores.map { Unmanaged.passUnretained($0.1) }
            try projections.withUnsafeBufferPointer { projections in
                try reader.forEachView(from: low + 1) { view, decode in
                    for i in projections.indices {
                        try unretained[i]._withUnsafeGuaranteedRef { store in
                            guard store.checkpoint + 1 == view.seq else { return }
                            try ProjectionRegistry.apply(view, projections[i], store, decode: decode)
                        }
                    }
                    seen += 1
                    guard seen & 0x3FF == 0 else { return seen < options.batchSize && view.seq < head }
                    if seen & 0xFFFF == 0 { report(view.seq, head, seen) }
                    let bytes = stores.reduce(0) { $0 + $1.1.approximateBytes }
                    return budget.hold(bytes, slot) && seen < options.batchSize && view.seq < head
                }
            }
            for (_, store, _) in stores { try store.flushCache() }
            chunk.applied = seen
            chunk.folds = zip(stores, from).map { ($0.0, $0.1.overlay!, $0.2, $1, $0.1.checkpoint) }
            return chunk
        }
    }

    func shadowMeta(_ p: any Projection, _ txn: Transaction) throws -> ProjectionMeta {
        guard let meta = try registry.meta(p.name, rebuild: true, in: txn), meta.version == p.version else {
            throw LedgerError(.projectionStale, "the rebuild record of \(p.name) is gone or of another version: another process reset it, or the store is damaged (`ledger verify --deep`)")
        }
        return meta
    }

    /// A chunk on its way to the shadows: each projection's entries in key order, and how
    /// many of them are written.
    struct ChunkWrite {
        struct Fold {
            let projection: any Projection
            let overlay: ProjectionOverlay
            let entries: [ProjectionOverlay.Entry]
            var written = 0
            let fresh: Bool
            let from: UInt64
            let to: UInt64
        }
        var folds: [Fold]
        /// Whether a part was committed: the shadows are marked as being written.
        var started = false

        init(_ chunk: Chunk) {
            folds = chunk.folds.map { Fold(projection: $0.projection, overlay: $0.overlay, entries: $0.overlay.takeSortedEntries(),
                                           fresh: $0.fresh, from: $0.from, to: $0.to) }
        }

        var remaining: Int { folds.reduce(0) { $0 + $1.entries.count - $1.written } }
    }

    /// Writes the next `limit` of a chunk's entries in `txn`, all but its last part. The
    /// first part marks each shadow as being written (version 0 in its rebuild record), so
    /// a rebuild stopped before the chunk's last part finds the shadow half-written and
    /// starts it again (``start()``) instead of folding the chunk twice into it.
    func writePart(_ w: inout ChunkWrite, _ limit: Int, _ txn: Transaction) throws {
        var left = limit
        for i in w.folds.indices {
            let f = w.folds[i]
            var meta = try beingWritten(f, w, txn)
            if !w.started {
                meta.version = 0
                try registry.saveMeta(meta, f.projection.name, rebuild: true, in: txn)
            }
            let n = min(left, f.entries.count - f.written)
            guard n > 0 else { continue }
            guard let store = try registry.store(for: f.projection, meta: meta, in: txn) else {
                throw LedgerError(.projectionStale, "the rebuild databases of \(f.projection.name) vanished: another process reset them")
            }
            try ProjectionOverlay.write(f.entries[f.written..<f.written + n], to: store, append: f.fresh)
            w.folds[i].written += n
            left -= n
        }
        w.started = true
    }

    /// The rebuild record of `f`'s shadow, checked: where the chunk began, marked as being
    /// written once a part was committed.
    private func beingWritten(_ f: ChunkWrite.Fold, _ w: ChunkWrite, _ txn: Transaction) throws -> ProjectionMeta {
        guard let meta = try registry.meta(f.projection.name, rebuild: true, in: txn),
              meta.version == (w.started ? 0 : f.projection.version), meta.checkpoint == f.from else {
            throw LedgerError(.projectionStale, "the rebuild record of \(f.projection.name) moved from seq \(f.from): another process changed it")
        }
        return meta
    }

    /// Writes the rest of a chunk into the shadows (its postings included) and records their
    /// checkpoints; when the log's head is near (what was appended while the chunk folded),
    /// folds the rest in this same transaction and swaps each shadow in.
    func write(_ w: ChunkWrite, _ txn: Transaction, _ options: RebuildOptions, resumed: [String: UInt64]) throws -> Step {
        for f in w.folds {
            var meta = try beingWritten(f, w, txn)
            guard let store = try registry.store(for: f.projection, meta: meta, in: txn) else {
                throw LedgerError(.projectionStale, "the rebuild databases of \(f.projection.name) vanished: another process reset them")
            }
            try ProjectionOverlay.write(f.entries[f.written...], to: store, append: f.fresh)
            try f.overlay.writePostings(to: store)
            meta.version = f.projection.version
            meta.checkpoint = f.to
            try registry.saveMeta(meta, f.projection.name, rebuild: true, in: txn)
        }
        let head = try LogReader(txn: txn, dbs: dbs).head().seq
        let low = w.folds.map(\.to).min() ?? head
        // The rest is folded under the write lock only when it is short: appenders wait on it.
        guard head - low <= UInt64(min(options.batchSize, Self.tailUnderLock)) else {
            return Step(checkpoint: low, head: head)
        }
        return try batch(w.folds.map(\.projection), txn, options, resumed: resumed)
    }

    /// The most events folded inside a write transaction (the tail appended while the last
    /// chunk folded): commands wait for it.
    static let tailUnderLock = 10_000
}

/// A chunk's memory budget, shared by its groups: one that needs little (postings of rare
/// events) leaves the rest to one that needs much (pending actions). Each group reports
/// what it holds every 1 024 events; all stop once the sum reaches the limit.
final class FoldBudget: @unchecked Sendable {
    // Safe: `held` is only touched with `lock` held.
    private let lock = NSLock()
    private var held: [Int]
    let limit: Int

    init(limit: Int, groups: Int) {
        self.limit = limit
        held = Array(repeating: 0, count: groups)
    }

    /// Records that group `slot` holds `bytes`; whether the groups together stay below the limit.
    func hold(_ bytes: Int, _ slot: Int) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        held[slot] = bytes
        return held.reduce(0, +) < limit
    }
}

/// The threads folding a chunk's other groups. Safe to share: each thread writes only its
/// own slot, a box of its own (writes to one shared array from several threads would race
/// on the array's buffer), and the slots are read only after ``wait()``, which the group's
/// `leave` orders after every write.
private final class OtherThreads: @unchecked Sendable {
    /// Written by one thread, then read after the group's wait (see above).
    private final class Slot: @unchecked Sendable { var result: Result<ShadowBuild.Chunk, any Error> = .success(ShadowBuild.Chunk()) }
    private let slots: [Slot]
    private let group = DispatchGroup()

    init(count: Int) { slots = (0..<count).map { _ in Slot() } }

    func start(_ i: Int, _ body: @escaping @Sendable () throws -> ShadowBuild.Chunk) {
        group.enter()
        let slot = slots[i]
        Thread.detachNewThread { [group] in
            slot.result = Result { try body() }
            group.leave()
        }
    }

    func wait() -> [Result<ShadowBuild.Chunk, any Error>] {
        group.wait()
        return slots.map(\.result)
    }
}
