/// The auto-ships of a window.
public struct AutoShipReport: Sendable {
    public var window: TimeWindow
    public var count: Int
    public var byKind: KindCounts
    public var items: [AutoShippedProjection.Record]

    public var json: JSON {
        ["from": .string(window.from.iso8601), "to": .string(window.to.iso8601), "count": .number(Double(count)),
         "by_kind": kindsJSON(byKind), "items": .array(items.map(\.json))]
    }
}

/// One action's whole lifecycle.
public struct ActionTrail: Sendable {
    public var actionId: String
    /// `pending`, `held`, `approved`, `auto_shipped`, `dismissed`, `executed`, `failed` or `expired` at `now`.
    public var state: String
    public var trail: [AuditEntry]

    public var json: JSON {
        ["action_id": .string(actionId), "state": .string(state), "trail": .array(trail.map(\.json))]
    }
}

/// Which audit index a listing reads.
public enum AuditIndex: Sendable, Equatable {
    case actor(String), device(String), specialist(String), surface(String)
    /// Every event, by time.
    case all

    var database: Int {
        switch self {
        case .actor: AuditProjection.byActor
        case .device: AuditProjection.byDevice
        case .specialist: AuditProjection.bySpecialist
        case .surface: AuditProjection.bySurface
        case .all: AuditProjection.byTime
        }
    }

    var prefix: [UInt8] {
        switch self {
        case .actor(let s), .device(let s), .specialist(let s), .surface(let s): Keys.prefix(s)
        case .all: []
        }
    }
}

/// A page of audit entries.
public struct AuditListing: Sendable {
    public var entries: [AuditEntry]
    public var nextPageToken: String?

    public var json: JSON {
        ["count": .number(Double(entries.count)), "items": .array(entries.map(\.json)),
         "next_page_token": nextPageToken.map(JSON.string) ?? .null]
    }
}

extension ProjectionSnapshot {
    /// Auto-ships in `window` (all persons, or one), oldest first, with counts by kind.
    /// Reads the time-ordered index from the window's start: cost ∝ the answer.
    public func autoShipped(in window: TimeWindow, person: String? = nil) throws -> AutoShipReport {
        let store = try store("autoshipped")
        var items: [AutoShippedProjection.Record] = []
        func record(_ key: [UInt8]) throws -> AutoShippedProjection.Record? {
            try key.withUnsafeBytes { k in
                try store.withValue(AutoShippedProjection.byTime, key: k) { try AutoShippedProjection.Record(key: k, value: $0) }
            }
        }
        if let person {
            let prefix = Keys.prefix(person)
            try store.scan(AutoShippedProjection.byPerson, from: prefix + Keys.u64(ProjectionKeys.timeBits(window.from))) { k, _ in
                guard ProjectionKeys.has(k, prefix: prefix), ProjectionKeys.time(k, at: prefix.count) < window.to else { return false }
                guard let r = try record(Array(k[prefix.count...])) else {
                    throw LedgerError(.projectionStale, "auto-ship index entry without its record")
                }
                items.append(r)
                return true
            }
        } else {
            try store.scan(AutoShippedProjection.byTime, from: Keys.u64(ProjectionKeys.timeBits(window.from))) { k, v in
                guard ProjectionKeys.time(k, at: 0) < window.to else { return false }
                items.append(try AutoShippedProjection.Record(key: k, value: v))
                return true
            }
        }
        var counts: [String: Int] = [:]
        for r in items { counts[r.kind, default: 0] += 1 }
        return AutoShipReport(window: window, count: items.count,
                              byKind: counts.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }, items: items)
    }

    /// Every event of `actionId` in seq order, and its state at `now`.
    /// - throws: `unknown_action` when it was never proposed.
    public func auditAction(_ actionId: String, now: Timestamp) throws -> ActionTrail {
        // The log's per-action index lists the seqs; the audit entries describe them. An
        // entry is written once, under its seq, so the stored projection answers for every
        // seq up to its checkpoint: the tail is folded only when the action has events in it.
        let seqs = try LogReader(txn: txn, dbs: dbs).seqs(in: dbs.actionSeqs, of: actionId)
        let stored = try storedStore("audit")
        let store = seqs.allSatisfy { $0 <= stored.checkpoint } ? stored : try self.store("audit")
        let trail = try seqs.map { try entry(store, $0) }
        guard let first = trail.first, first.type == .actionProposed else {
            throw LedgerError(.unknownAction, "no action \(actionId)", details: ["action_id": .string(actionId)])
        }
        var state = "pending"
        var held: Timestamp?
        for e in trail {
            switch e.type {
            case .actionApproved: state = "approved"
            case .actionAutoShipped: state = "auto_shipped"
            case .actionDismissed: state = "dismissed"
            case .actionExecuted: state = "executed"
            case .actionFailed: state = "failed"
            case .actionExpired: state = "expired"
            case .actionHeld: held = e.until
            default: break
            }
        }
        if state == "pending" {
            // The proposal's `until` is its expiry.
            if let expires = first.until, expires <= now { state = "expired" } else if let held, held > now { state = "held" }
        }
        return ActionTrail(actionId: actionId, state: state, trail: trail)
    }

    /// Audit entries of one actor, device, specialist or surface (or all) in `window`,
    /// oldest first, `limit` at a time.
    public func audit(_ index: AuditIndex, in window: TimeWindow = .all, limit: Int = 100,
                      pageToken: String? = nil) throws -> AuditListing {
        guard (1...100_000).contains(limit) else { throw LedgerError(.invalidInput, "limit must be 1…100000, got \(limit)") }
        let store = try store("audit")
        let prefix = index.prefix
        var start = prefix + Keys.u64(ProjectionKeys.timeBits(window.from))
        if let token = try pageToken.map({ try PageToken($0, length: 16) }) {
            // Strictly after the token's key: append a byte so the seek lands past it.
            start = max(start, prefix + token.bytes + [0], by: { $0.lexicographicallyPrecedes($1) })
        }
        var listing = AuditListing(entries: [], nextPageToken: nil)
        try store.scan(index.database, from: start) { k, _ in
            guard k.count == prefix.count + 16, ProjectionKeys.has(k, prefix: prefix),
                  ProjectionKeys.time(k, at: prefix.count) < window.to else { return false }
            if listing.entries.count == limit {
                listing.nextPageToken = PageToken(keyTail(listing.entries.last!)).description
                return false
            }
            listing.entries.append(try entry(store, Keys.readU64(k, at: prefix.count + 8)))
            return true
        }
        return listing
    }

    private func keyTail(_ e: AuditEntry) -> [UInt8] { Keys.u64(ProjectionKeys.timeBits(e.at)) + Keys.u64(e.seq) }

    private func entry(_ store: ProjectionStore, _ seq: UInt64) throws -> AuditEntry {
        let e = try store.withValue(AuditProjection.entries, key: Keys.u64(seq)) { try AuditEntry(seq: seq, decoding: $0) }
        guard let e else {
            throw LedgerError(.projectionStale, "audit index names seq \(seq), which has no entry")
        }
        return e
    }
}

private func max(_ a: [UInt8], _ b: [UInt8], by less: ([UInt8], [UInt8]) -> Bool) -> [UInt8] { less(a, b) ? b : a }
