/// The writer's fold: brings the projections level with the log inside a write
/// transaction, after the log's own writes (the log knows nothing of projections).
extension ProjectionRegistry {
    /// Folds the log's tail into every projection trailing the head by `bound` events or
    /// more (``maxLag`` by default), and records their checkpoints, in the transaction of
    /// `session`: the events it appended are applied from memory, earlier ones read from
    /// the log in place.
    /// - throws: `projection_stale` when a projection's checkpoint is past the head. A fold
    ///   that fails marks its projection stale and the events still commit: a projection
    ///   never blocks the log (``ProjectionStaleMark``).
    /// - parameter filings: actions' filings the writer's commands learned (``KnownFilings``).
    func fold(after session: AppendSession, bound: UInt64? = nil, filings: KnownFilings = KnownFilings()) throws {
        guard session.appendedAny else { return }
        let appended = session.appendedEvents
        try fold(session.txn, session.dbs, head: session.head.seq, bound: bound ?? maxLag,
                 fromLog: appended == nil ? session.head.seq : session.headBefore.seq, appended: appended ?? [], filings: filings)
    }

    /// The same fold in a transaction of its own (the writer's, once its queue is empty):
    /// the whole tail is read from the log. Returns whether it wrote anything.
    @discardableResult
    func foldLagging(_ txn: Transaction, _ dbs: LogDatabases, filings: KnownFilings = KnownFilings()) throws -> Bool {
        let head = try LogReader(txn: txn, dbs: dbs).head().seq
        return try fold(txn, dbs, head: head, bound: maxLag, fromLog: head, appended: [], filings: filings)
    }

    /// Whether any projection trails `head` by `bound` or more and is not marked stale.
    func lags(_ txn: Transaction, _ dbs: LogDatabases, head: UInt64, bound: UInt64) throws -> Bool {
        let checkpoints = try self.checkpoints(dbs.meta, in: txn)
        let marks = try staleMarks(dbs.meta, in: txn)
        return zip(checkpoints, marks).contains { $1 == nil && $0 < head && head - $0 >= bound }
    }

    @discardableResult
    private func fold(_ txn: Transaction, _ dbs: LogDatabases, head: UInt64, bound: UInt64,
                      fromLog: UInt64, appended: [Event], filings: KnownFilings) throws -> Bool {
        // The projections are opened only here: most commits just read their checkpoints.
        let checkpoints = try self.checkpoints(dbs.meta, in: txn)
        for (p, c) in zip(projections, checkpoints) where c > head {
            throw LedgerError(.projectionStale, "projection \(p.name) is at seq \(c), past the log's head \(head): "
                + "run `ledger rebuild --projection \(p.name)`")
        }
        let marks = try staleMarks(dbs.meta, in: txn)
        guard zip(checkpoints, marks).contains(where: { $1 == nil && head - $0 >= bound && head > $0 }) else { return false }
        let stores = try liveStores(in: txn, log: dbs)
        for s in stores { s.knownFilings = filings.byId }
        var stale = marks.map { $0 != nil }
        func fold(_ seq: UInt64, _ apply: (any Projection, ProjectionStore) throws -> Void) throws {
            for (i, (p, s)) in zip(projections, stores).enumerated() where !stale[i] && s.checkpoint < seq {
                do {
                    try apply(p, s)
                } catch let e as LedgerError {
                    // Its database may hold part of this event: the mark keeps every query off it until a rebuild.
                    stale[i] = true
                    try ProjectionStaleMark(seq: seq, reason: e.message).write(p.name, dbs.meta, in: txn)
                }
            }
        }
        // One pass: from the log (read in place) up to what this transaction appended, then
        // this transaction's events from memory.
        let reader = LogReader(txn: txn, dbs: dbs)
        if let low = checkpoints.min(), low < fromLog {
            try reader.forEachView(from: low + 1) { view, decode in
                try fold(view.seq) { p, s in try ProjectionRegistry.apply(view, p, s, decode: decode) }
                return view.seq < fromLog
            }
        }
        for event in appended {
            try fold(event.seq) { p, s in try ProjectionRegistry.apply(event, p, s) }
        }
        for (i, (p, s)) in zip(projections, stores).enumerated() where !stale[i] {
            do {
                try s.flushPostings()
            } catch let e as LedgerError {
                try ProjectionStaleMark(seq: s.checkpoint, reason: e.message).write(p.name, dbs.meta, in: txn)
                continue
            }
            guard s.checkpoint == head else {
                throw LedgerError(.projectionStale, "projection \(p.name) reached seq \(s.checkpoint), not the head \(head)")
            }
            try saveMeta(ProjectionMeta(version: p.version, generation: s.generation, checkpoint: s.checkpoint), p.name, in: txn)
        }
        return true
    }
}
