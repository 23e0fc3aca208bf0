/// Brings projections level with the log: after a version bump (rebuilt from seq 1) or
/// when a projection trails the head by ``ProjectionRegistry/maxLag`` events or more (a
/// shorter tail is normal: the next fold takes it). Runs in bounded write transactions,
/// each re-reading the checkpoint, so it is resumable and safe beside other processes.
struct ProjectionMaintenance {
    let environment: Environment
    let dbs: LogDatabases
    let registry: ProjectionRegistry
    /// Events applied per write transaction while catching up.
    var batchSize = 10_000

    func catchUp() throws {
        try dropLegacyLayout()
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

    /// Applies up to ``batchSize`` events when the projection trails by `maxLag` or more;
    /// returns whether more remain.
    func step(_ projection: any Projection) throws -> Bool {
        try environment.write { txn in
            let reader = LogReader(txn: txn, dbs: dbs)
            let head = try reader.head().seq
            guard let meta = try registry.meta(projection.name, in: txn), meta.checkpoint < head,
                  head - meta.checkpoint >= registry.maxLag,
                  try ProjectionStaleMark.read(projection.name, dbs.meta, in: txn) == nil else { return false }
            let through = min(head, meta.checkpoint + UInt64(batchSize))
            do {
                try txn.nested { child in try registry.foldLive(projection, LogReader(txn: child, dbs: dbs), through: through) }
            } catch let e as LedgerError {
                // Rolled back; the mark (in the outer transaction) keeps queries off it and the store open.
                let seq = Self.seq(in: e) ?? meta.checkpoint + 1
                try ProjectionStaleMark(seq: seq, reason: e.message).write(projection.name, dbs.meta, in: txn)
                return false
            }
            return through < head
        }
    }

    /// The seq named in a fold's refusal ("… cannot apply seq N: …").
    static func seq(in error: LedgerError) -> UInt64? {
        guard let r = error.message.range(of: "cannot apply seq ") else { return nil }
        return UInt64(error.message[r.upperBound...].prefix { $0.isNumber })
    }

    /// Stores written before projection version 2 kept one LMDB database per index
    /// (`p/NAME/GEN/DB`) and their bookkeeping in a `projections` database. Version 2 rebuilds
    /// every projection into `p/NAME/GEN`, so the old databases are deleted here, once, to give
    /// their pages back; nothing of the log is touched.
    func dropLegacyLayout() throws {
        try environment.write { txn in
            guard let legacyMeta = try txn.openDatabase("projections", create: false) else { return }
            let legacy = ["today": ["items", "feed", "policy"], "autoshipped": ["by_time", "by_person", "open"],
                          "audit": ["entries", "by_action", "by_actor", "by_device", "by_time", "by_specialist",
                                    "by_surface", "actions", "state"],
                          "devices": ["devices"], "activity": ["timeline"]]
            for (projection, names) in legacy {
                for generation in 0...1 {
                    for name in names {
                        if let db = try txn.openDatabase("p/\(projection)/\(generation)/\(name)", create: false) {
                            try txn.drop(db, delete: true)
                        }
                    }
                }
            }
            try txn.drop(legacyMeta, delete: true)
        }
    }
}
