extension Ledger {
    /// Checks every projection against the log (the crash test's "projections agree with
    /// the log"): its version is the code's, its checkpoint is at most the head (and within
    /// the replay limit), every stored key lies in one of its logical databases, and — with
    /// `refold` — folding the whole log from scratch, in memory, gives the digest of the
    /// stored state (entries and postings) with the log's tail folded in. All in read
    /// snapshots: nothing is written, read-only stores included.
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
        guard refold, !registry.projections.isEmpty else { return }
        try read { reader in
            let head = try reader.head().seq
            guard head > 0 else { return }
            let refolded = try registry.foldInMemory(registry.projections, reader, through: head)
            for (p, store) in zip(registry.projections, refolded) {
                // The live state at the head: stored entries with the tail folded in memory.
                let recorded = try registry.readStore(p.name, reader: reader, head: head).stateDigest()
                let digest = try store.stateDigest()
                guard digest == recorded else {
                    throw Self.projectionFailure(p.name, "folding the log from scratch gives digest \(digest.hex), "
                        + "the stored state (with the log's tail folded in) has \(recorded.hex)")
                }
            }
        }
    }

    static func projectionFailure(_ name: String, _ what: String) -> LedgerError {
        LedgerError(.integrityFailure, "projection \(name) \(what)", details: ["projection": .string(name)])
    }
}
