/// One projection's bookkeeping as `ledger projections` shows it.
public struct ProjectionStatus: Sendable {
    public var name: String
    /// The fold's version in this build.
    public var version: UInt32
    /// The version the stored state was built with (nil: never built).
    public var storedVersion: UInt32?
    public var generation: UInt8?
    public var checkpoint: UInt64
    public var head: UInt64
    /// The shadow's checkpoint while a rebuild is under way (or was interrupted).
    public var rebuildCheckpoint: UInt64?
    /// The seq this projection could not fold, when it is marked stale for that.
    public var staleAt: UInt64?

    public var lag: UInt64 { head - min(checkpoint, head) }

    /// `live` (queries fold its lag, the log's tail, in memory), `stale` (of another
    /// version, or further behind than ``ProjectionRegistry/replayLimit``: queries refuse
    /// it) or `missing`.
    public var state: String {
        guard let storedVersion else { return "missing" }
        if staleAt != nil { return "stale" }
        return storedVersion == version && checkpoint <= head && lag <= ProjectionRegistry.replayLimit ? "live" : "stale"
    }

    public var json: JSON {
        ["name": .string(name), "version": .number(Double(version)),
         "stored_version": storedVersion.map { .number(Double($0)) } ?? .null,
         "generation": generation.map { .number(Double($0)) } ?? .null, "checkpoint": .number(Double(checkpoint)),
         "head": .number(Double(head)), "lag": .number(Double(lag)),
         "state": .string(state), "rebuild_checkpoint": rebuildCheckpoint.map { .number(Double($0)) } ?? .null,
         "stale_at": staleAt.map { .number(Double($0)) } ?? .null]
    }
}

extension ProjectionSnapshot {
    /// Every registered projection's version, checkpoint and lag (never refuses a stale one).
    public func statuses() throws -> [ProjectionStatus] {
        try registry.projections.map { p in
            let meta = try registry.meta(p.name, in: txn)
            return ProjectionStatus(name: p.name, version: p.version, storedVersion: meta?.version, generation: meta?.generation,
                                    checkpoint: meta?.checkpoint ?? 0, head: head,
                                    rebuildCheckpoint: try registry.meta(p.name, rebuild: true, in: txn)?.checkpoint,
                                    staleAt: try registry.metaDB(txn).flatMap { try ProjectionStaleMark.read(p.name, $0, in: txn) }?.seq)
        }
    }
}
