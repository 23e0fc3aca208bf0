/// `rebuild --verify` and the refold of `verify --deep`: the log folded from seq 1 into
/// memory and compared with the live state, in one read snapshot. Nothing is written (the
/// data file is byte-identical afterwards) and no writer waits.
extension ProjectionRegistry {
    /// A store that folds into memory only: entries in an overlay over nothing, postings
    /// kept as per-list digests. Its `database` is never read (`memoryOnly`).
    func memoryStore(_ p: any Projection, _ reader: LogReader) -> ProjectionStore {
        ProjectionStore(txn: reader.txn, database: reader.dbs.events, databaseCount: p.databases.count, generation: 0xFF,
                        name: p.name, checkpoint: 0, overlay: ProjectionOverlay(digestOnly: true), memoryOnly: true, log: reader)
    }

    /// Folds events 1…`head` into a memory store per projection, reading the log once.
    func foldInMemory(_ selected: [any Projection], _ reader: LogReader, through head: UInt64,
                      progress: (UInt64) -> Void = { _ in }) throws -> [ProjectionStore] {
        let stores = selected.map { memoryStore($0, reader) }
        guard head > 0 else { return stores }
        try reader.forEachView(from: 1) { view, decode in
            for (p, s) in zip(selected, stores) { try Self.apply(view, p, s, decode: decode) }
            if view.seq % 65_536 == 0 { progress(view.seq) }
            return view.seq < head
        }
        return stores
    }
}

extension Ledger {
    /// Folds the log into memory for `selected` and compares each with its live state (the
    /// stored state with the log's tail folded in), in one read snapshot.
    func verifyInMemory(_ selected: [any Projection], progress: (RebuildProgress) -> Void) throws -> [RebuildResult] {
        let clock = ContinuousClock.now
        return try environment.read { txn in
            let reader = LogReader(txn: txn, dbs: dbs)
            let head = try reader.head().seq
            let rebuilt = try registry.foldInMemory(selected, reader, through: head) { seq in
                progress(RebuildProgress(checkpoint: seq, head: head, applied: seq,
                                         elapsed: (ContinuousClock.now - clock) / .seconds(1)))
            }
            progress(RebuildProgress(checkpoint: head, head: head, applied: head, elapsed: (ContinuousClock.now - clock) / .seconds(1)))
            return try zip(selected, rebuilt).map { p, shadow in
                let live = try registry.readStore(p.name, reader: reader, head: head)
                let digest = try shadow.stateDigest(), liveDigest = try live.stateDigest()
                var result = RebuildResult(projection: p.name, version: p.version, generation: live.generation,
                                           checkpoint: head, digest: digest, resumedFrom: 0, swapped: false)
                result.liveDigest = liveDigest
                if digest != liveDigest { result.difference = try ProjectionComparison.firstDifference(p, live: live, rebuilt: shadow) }
                return result
            }
        }
    }
}
