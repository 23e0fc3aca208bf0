/// Brings projections level with the log: after a version bump (rebuilt from seq 1) or
/// when a projection's checkpoint trails the head. Runs in bounded write transactions,
/// each re-reading the checkpoint, so it is resumable and safe beside other processes.
struct ProjectionMaintenance {
    let environment: Environment
    let dbs: LogDatabases
    let registry: ProjectionRegistry
    /// Events applied per write transaction while catching up.
    var batchSize = 10_000

    func catchUp() throws {
        for projection in registry.projections {
            try reset(projection, ifVersionDiffers: true)
            while try step(projection) {}
        }
    }

    /// Empties a projection whose stored version is not the code's (or that has no meta).
    func reset(_ projection: any Projection, ifVersionDiffers: Bool) throws {
        try environment.write { txn in
            let meta = try registry.meta(projection.name, in: txn)
            if let meta, ifVersionDiffers, meta.version == projection.version { return }
            let generation = meta?.generation ?? 0
            let fresh = ProjectionMeta(version: projection.version, generation: generation, checkpoint: 0, digest: .zero)
            guard let store = try registry.store(for: projection, meta: fresh, in: txn) else { return }
            try store.removeAll()
            try registry.saveMeta(fresh, projection.name, in: txn)
        }
    }

    /// Applies up to ``batchSize`` events; returns whether more remain.
    func step(_ projection: any Projection) throws -> Bool {
        try environment.write { txn in
            let reader = LogReader(txn: txn, dbs: dbs)
            let head = try reader.head().seq
            guard let meta = try registry.meta(projection.name, in: txn), meta.checkpoint < head,
                  let store = try registry.store(for: projection, meta: meta, in: txn) else { return false }
            var applied = 0
            try reader.forEach(from: meta.checkpoint + 1) { stored in
                try ProjectionRegistry.apply(stored.event, projection, store)
                applied += 1
                return applied < batchSize
            }
            var updated = meta
            updated.checkpoint = store.checkpoint
            updated.digest = store.digest
            try registry.saveMeta(updated, projection.name, in: txn)
            return store.checkpoint < head
        }
    }
}
