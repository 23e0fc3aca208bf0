import Foundation

/// How a rebuild runs.
public struct RebuildOptions: Sendable {
    /// Fold the log into memory and compare it with the live projection, in one read
    /// snapshot: nothing is written, nothing swapped.
    public var verify = false
    /// Events folded per chunk at most. A chunk is folded in memory in a read snapshot (no
    /// writer waits on it) and written in one write transaction. The memory budget is what
    /// bounds a chunk's size; this bounds the work a killed rebuild redoes, while keeping
    /// chunks few, since each costs a durable commit.
    public var batchSize = 4_000_000
    /// Bytes a chunk's in-memory state may reach before it is written: bounds the heap,
    /// whatever the log's length, and how long one chunk's write holds the writer.
    public var memoryBudget = 16 << 20
    /// Entries of a chunk written per write transaction at most (its postings go with the
    /// last): bounds the pages one transaction dirties, which LMDB keeps in memory. At least 1.
    public var writePart = 16_384

    public init(verify: Bool = false) { self.verify = verify }
}

/// Where a running rebuild stands, reported after every batch.
public struct RebuildProgress: Sendable {
    /// The lowest shadow checkpoint among the projections still building.
    public var checkpoint: UInt64
    public var head: UInt64
    /// Events applied by this run (not counting what an earlier, interrupted run did).
    public var applied: UInt64
    public var elapsed: Double

    public var eventsPerSecond: Double { elapsed > 0 ? Double(applied) / elapsed : 0 }
    /// Seconds left at the current rate; nil before there is a rate.
    public var eta: Double? { eventsPerSecond > 0 ? Double(head - min(checkpoint, head)) / eventsPerSecond : nil }
}

/// What a rebuild did to one projection.
public struct RebuildResult: Sendable {
    public var projection: String
    public var version: UInt32
    /// The generation now live (after a swap), or the shadow's (with verify).
    public var generation: UInt8
    public var checkpoint: UInt64
    /// The digest of the rebuilt entries; with verify, of its entries and postings (what
    /// `liveDigest` is compared with). A swap skips hashing the postings: they are many,
    /// and a fold derived them from the log just now. Computed when the rebuild ends:
    /// nothing keeps a digest on the write path.
    public var digest: Digest
    /// Where this run started: 0 for a fresh build, the shadow checkpoint when it resumed.
    public var resumedFrom: UInt64
    /// With verify: the live projection's digest recomputed from its entries, and the
    /// first entry that differs (nil when equal).
    public var liveDigest: Digest?
    public var difference: ProjectionDifference?
    public var swapped: Bool

    public var json: JSON {
        var o: JSONObject = ["projection": .string(projection), "version": .number(Double(version)),
                             "generation": .number(Double(generation)), "checkpoint": .number(Double(checkpoint)),
                             "digest": .string(digest.hex), "resumed_from": .number(Double(resumedFrom)),
                             "swapped": .bool(swapped)]
        if let liveDigest {
            o["live_digest"] = .string(liveDigest.hex)
            o["equal"] = .bool(difference == nil)
            o["difference"] = difference?.json ?? .null
        }
        return .object(o)
    }
}

extension Ledger {
    /// Rebuilds `names` (every registered projection when nil) from seq 1 into shadow
    /// databases while writers keep appending, then swaps each in atomically — or, with
    /// ``RebuildOptions/verify``, compares it with the live one and discards it.
    ///
    /// Bounded write transactions record the shadow's checkpoint and digest under
    /// `NAME#rebuild`, so a killed rebuild resumes where it stopped when run again. Two
    /// rebuilds never run at once: an exclusive `flock` on `PATH-rebuild.lock`.
    /// - throws: `busy` when another rebuild runs, `read_only`, `invalid_input` for an
    ///   unknown name, `projection_stale` naming the seq a fold cannot apply.
    public func rebuild(_ names: [String]? = nil, options: RebuildOptions = RebuildOptions(),
                        progress: (RebuildProgress) -> Void = { _ in }) throws -> [RebuildResult] {
        guard options.verify || !environment.isReadOnly else { throw LedgerError(.readOnly, "a rebuild writes; open the ledger writable") }
        if migrationNeeded != nil, !options.verify { _ = try requireWriter() }  // migration_required: `ledger migrate` rebuilds them
        // A name given twice is rebuilt once, in the order first asked for.
        let selected = try names.map { list in
            var seen = Set<String>()
            return try list.filter { seen.insert($0).inserted }.map { n in
                guard let p = registry.projections.first(where: { $0.name == n }) else {
                    throw LedgerError(.invalidInput, "no projection named \(n) (known: "
                        + registry.projections.map(\.name).joined(separator: ", ") + ")")
                }
                return p
            }
        } ?? registry.projections
        guard options.batchSize > 0 else { throw LedgerError(.invalidInput, "batch size must be positive") }
        guard options.memoryBudget > 0 else { throw LedgerError(.invalidInput, "the memory budget must be positive") }
        if options.verify { return try verifyInMemory(selected, progress: progress) }
        let lock = try RebuildLock(ledgerPath: environment.path)
        defer { withExtendedLifetime(lock) {} }
        let build = ShadowBuild(environment: environment, dbs: dbs, registry: registry, projections: selected)
        return try build.run(options, progress)
    }
}

/// The rebuild itself: one pass over the log feeding every selected projection's shadow.
struct ShadowBuild: Sendable {
    let environment: Environment
    let dbs: LogDatabases
    let registry: ProjectionRegistry
    let projections: [any Projection]

    static func shadowGeneration(of live: ProjectionMeta?) -> UInt8 { (live?.generation ?? 0) == 0 ? 1 : 0 }

    func run(_ options: RebuildOptions, _ progress: (RebuildProgress) -> Void) throws -> [RebuildResult] {
        let resumed = try start()
        let clock = ContinuousClock.now
        var applied: UInt64 = 0
        var results: [String: RebuildResult] = [:]
        func report(_ checkpoint: UInt64, _ head: UInt64, _ more: UInt64) {
            progress(RebuildProgress(checkpoint: checkpoint, head: head, applied: applied + more,
                                     elapsed: (ContinuousClock.now - clock) / .seconds(1)))
        }
        var reached: UInt64?
        while results.count < projections.count {
            let pending = projections.filter { results[$0.name] == nil }
            let chunk = try fold(pending, options, report)
            applied += chunk.applied
            // Folded, not yet written: the moment a chunk holds the most memory.
            if let to = chunk.folds.map(\.to).min() { report(to, max(to, chunk.head), 0) }
            // Written in transactions of at most `writePart` entries: LMDB keeps the pages a
            // write transaction dirtied, malloc'd, for its environment's life (its free list
            // for reuse), so the largest transaction, not the fold, would set the heap.
            var writing = ChunkWrite(chunk)
            let part = max(1, options.writePart)
            while writing.remaining > part {
                // A copy per attempt: the transaction may run again after the map grows.
                writing = try environment.write { txn in
                    var w = writing
                    try writePart(&w, part, txn)
                    return w
                }
            }
            let step = try environment.write { [writing] txn in try write(writing, txn, options, resumed: resumed) }
            applied += step.applied
            for r in step.finished { results[r.projection] = r }
            // A round that finishes nothing must move the checkpoint: one that did not would
            // run again for ever (a fold skips what does not follow its checkpoint).
            if step.finished.isEmpty, let reached, step.checkpoint <= reached {
                throw LedgerError(.integrityFailure, "the rebuild cannot get past seq \(step.checkpoint): the log does not "
                    + "continue there as stored; `ledger verify --deep` names the damage",
                    details: ["seq": .number(Double(step.checkpoint + 1))])
            }
            reached = step.checkpoint
            report(step.checkpoint, step.head, 0)
        }
        return projections.compactMap { results[$0.name] }
    }

    /// Resumes each shadow of the code's version, or starts it empty; returns where each starts.
    /// Every shadow database is opened here, in a write transaction whose commit publishes
    /// the handles: the chunks' read snapshots run on several threads at once, and LMDB
    /// forbids opening a database in two transactions concurrently.
    private func start() throws -> [String: UInt64] {
        try environment.write { txn in
            var from: [String: UInt64] = [:]
            for p in projections {
                let shadow = Self.shadowGeneration(of: try registry.meta(p.name, in: txn))
                if let r = try registry.meta(p.name, rebuild: true, in: txn), r.version == p.version, r.generation == shadow {
                    _ = try registry.store(for: p, meta: r, in: txn)
                    from[p.name] = r.checkpoint
                    continue
                }
                let fresh = ProjectionMeta(version: p.version, generation: shadow, checkpoint: 0)
                try empty(p, fresh, txn)
                try registry.saveMeta(fresh, p.name, rebuild: true, in: txn)
                from[p.name] = 0
            }
            return from
        }
    }

    private func empty(_ p: any Projection, _ meta: ProjectionMeta, _ txn: Transaction) throws {
        guard let store = try registry.store(for: p, meta: meta, in: txn) else { return }
        try store.removeAll()
    }

    struct Step {
        var applied: UInt64 = 0
        var checkpoint: UInt64 = 0
        var head: UInt64 = 0
        var caughtUp = false
        var finished: [RebuildResult] = []
    }

    /// In a write transaction: applies the log's short tail to every pending shadow, then
    /// swaps in each shadow that reached the head.
    func batch(_ pending: [any Projection], _ txn: Transaction, _ options: RebuildOptions,
                       resumed: [String: UInt64]) throws -> Step {
        let reader = LogReader(txn: txn, dbs: dbs)
        var step = Step()
        step.head = try reader.headMatchingLog().seq
        var shadows: [(any Projection, ProjectionMeta, ProjectionStore)] = []
        for p in pending {
            guard let meta = try registry.meta(p.name, rebuild: true, in: txn), meta.version == p.version else {
                throw LedgerError(.projectionStale, "the rebuild record of \(p.name) is gone or of another version: another process reset it, or the store is damaged (`ledger verify --deep`)")
            }
            guard let store = try registry.store(for: p, meta: meta, in: txn) else { continue }
            shadows.append((p, meta, store))
        }
        let low = shadows.map(\.2.checkpoint).min() ?? step.head
        if low < step.head {
            var seen = 0
            try reader.forEachView(from: low + 1) { view, decode in
                for (p, _, store) in shadows where store.checkpoint + 1 == view.seq {
                    try ProjectionRegistry.apply(view, p, store, decode: decode)
                }
                seen += 1
                return seen < options.batchSize
            }
            step.applied = UInt64(seen)
        }
        step.checkpoint = shadows.map(\.2.checkpoint).min() ?? step.head
        step.caughtUp = step.checkpoint == step.head
        for (p, meta, store) in shadows {
            try store.flushPostings()
            var updated = meta
            updated.checkpoint = store.checkpoint
            guard store.checkpoint == step.head else {
                try registry.saveMeta(updated, p.name, rebuild: true, in: txn)
                continue
            }
            step.finished.append(try swap(p, updated, txn, resumed: resumed[p.name] ?? 0))
        }
        return step
    }

    /// Makes the shadow live in this transaction and empties the old generation.
    private func swap(_ p: any Projection, _ shadow: ProjectionMeta, _ txn: Transaction, resumed: UInt64) throws -> RebuildResult {
        // The entries' digest for the record: small state (pending actions, devices), cheap to hash.
        let digest = try registry.store(for: p, meta: shadow, in: txn)?.entriesDigest() ?? .zero
        if let old = try registry.meta(p.name, in: txn), old.generation != shadow.generation {
            try empty(p, old, txn)
        }
        try registry.saveMeta(shadow, p.name, in: txn)
        try registry.deleteMeta(p.name, rebuild: true, in: txn)
        if let db = try registry.metaDB(txn) { try ProjectionStaleMark.clear(p.name, db, in: txn) }
        return RebuildResult(projection: p.name, version: p.version, generation: shadow.generation,
                             checkpoint: shadow.checkpoint, digest: digest, resumedFrom: resumed, swapped: true)
    }
}
