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

    /// Whether ``setUp(_:_:)`` has anything to do: an older projection layout to drop, or a
    /// projection with no bookkeeping or of another version. Works in a read transaction,
    /// so that opening an up-to-date store takes no write lock and writes nothing.
    static func needsSetUp(_ registry: ProjectionRegistry, _ txn: Transaction) throws -> Bool {
        if try txn.openDatabase(legacyMetaDatabase, create: false) != nil { return true }
        return try registry.projections.contains { try registry.meta($0.name, in: txn)?.version != $0.version }
    }

    /// Drops the older projection layout and empties every projection whose stored version
    /// is not the code's (or that has none), all in `txn`: the one write transaction of a
    /// writable open that has something to set up.
    static func setUp(_ registry: ProjectionRegistry, _ txn: Transaction) throws {
        try dropLegacyLayout(txn)
        for projection in registry.projections {
            let meta = try registry.meta(projection.name, in: txn)
            if let meta, meta.version == projection.version { continue }
            try ProjectionRegistry.dropDuplicatePostings(projection, txn)
            let fresh = ProjectionMeta(version: projection.version, generation: meta?.generation ?? 0, checkpoint: 0)
            guard let store = try registry.store(for: projection, meta: fresh, in: txn) else { continue }
            try store.removeAll()
            try registry.saveMeta(fresh, projection.name, in: txn)
        }
    }

    /// Folds the tail into every projection that trails by `maxLag` or more, in bounded
    /// write transactions; which ones do is read first, so that none is begun when none does.
    func catchUp() throws {
        let lagging = try environment.read { txn in try registry.projections.filter { try lags($0, txn) } }
        for projection in lagging {
            while try step(projection) {}
        }
    }

    /// Whether `projection` trails the head by `maxLag` or more and is not marked stale.
    private func lags(_ projection: any Projection, _ txn: Transaction) throws -> Bool {
        let head = try LogReader(txn: txn, dbs: dbs).head().seq
        guard let meta = try registry.meta(projection.name, in: txn), meta.checkpoint < head,
              head - meta.checkpoint >= registry.maxLag else { return false }
        return try ProjectionStaleMark.read(projection.name, dbs.meta, in: txn) == nil
    }

    /// Applies up to ``batchSize`` events when the projection trails by `maxLag` or more;
    /// returns whether more remain.
    func step(_ projection: any Projection) throws -> Bool {
        try environment.write { txn in
            // Read again: another process may have folded since.
            guard try lags(projection, txn), let meta = try registry.meta(projection.name, in: txn) else { return false }
            let head = try LogReader(txn: txn, dbs: dbs).head().seq
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
    /// (`p/NAME/GEN/DB`) and their bookkeeping in a `projections` database.
    static let legacyMetaDatabase = "projections"

    /// Version 2 rebuilds every projection into `p/NAME/GEN`, so the older layout's databases
    /// are deleted, once, to give their pages back; nothing of the log is touched.
    static func dropLegacyLayout(_ txn: Transaction) throws {
        guard let legacyMeta = try txn.openDatabase(legacyMetaDatabase, create: false) else { return }
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
