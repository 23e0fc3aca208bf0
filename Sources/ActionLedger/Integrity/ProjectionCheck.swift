extension Ledger {
    /// Checks every projection against the log (the crash test's "projections agree with
    /// the log"): its version is the code's, its checkpoint is at most the head (and within
    /// the replay limit), every stored key lies in one of its logical databases, and — with
    /// `refold` on a writable ledger — folding the whole log from scratch gives the digest
    /// of the stored state (entries and postings) with the log's tail folded in. The refold runs in a
    /// write transaction that is always aborted: nothing is written.
    /// - throws: `integrity_failure` naming the projection and what disagrees.
    public func verifyProjections(refold: Bool = true) throws {
        try read { reader in
            let head = try reader.head()
            for p in registry.projections {
                guard let meta = try registry.meta(p.name, in: reader.txn),
                      let store = try registry.store(for: p, meta: meta, in: reader.txn) else {
                    if head.seq == 0 { continue }
                    throw Self.projectionFailure(p.name, "has no state")
                }
                guard meta.version == p.version, meta.checkpoint <= head.seq,
                      head.seq - meta.checkpoint <= ProjectionRegistry.replayLimit else {
                    throw Self.projectionFailure(p.name, "is at seq \(meta.checkpoint) version \(meta.version); "
                        + "the log is at \(head.seq), the code at version \(p.version)")
                }
                _ = try store.entriesDigest()
            }
        }
        guard refold, !environment.isReadOnly, !registry.projections.isEmpty else { return }
        struct Rollback: Error {}
        do {
            try environment.write { txn in
                let reader = LogReader(txn: txn, dbs: dbs)
                let head = try reader.head().seq
                for p in registry.projections {
                    // The live state at the head: stored entries with the tail folded in memory.
                    let recorded = head == 0 ? .zero : try registry.readStore(p.name, reader: reader, head: head).stateDigest()
                    // A scratch generation no live or rebuild state uses; dropped with the abort.
                    let scratch = ProjectionMeta(version: p.version, generation: 0xFF, checkpoint: 0)
                    guard let store = try registry.store(for: p, meta: scratch, in: txn) else { continue }
                    try store.removeAll()
                    try reader.forEachView { view, decode in
                        try ProjectionRegistry.apply(view, p, store, decode: decode)
                        return true
                    }
                    let refolded = try store.stateDigest()
                    guard refolded == recorded else {
                        throw Self.projectionFailure(p.name, "folding the log from scratch gives digest \(refolded.hex), "
                            + "the stored state (with the log's tail folded in) has \(recorded.hex)")
                    }
                }
                throw Rollback()
            }
        } catch is Rollback {}
    }

    static func projectionFailure(_ name: String, _ what: String) -> LedgerError {
        LedgerError(.integrityFailure, "projection \(name) \(what)", details: ["projection": .string(name)])
    }
}
