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

    /// The posting family; nil for every event (read from the log itself).
    var family: Int? {
        switch self {
        case .actor: AuditProjection.byActor
        case .device: AuditProjection.byDevice
        case .specialist: AuditProjection.bySpecialist
        case .surface: AuditProjection.bySurface
        case .all: nil
        }
    }

    var id: [UInt8] {
        switch self {
        case .actor(let s), .device(let s), .specialist(let s), .surface(let s): Array(s.utf8)
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
    /// Reads the postings from the window's first seq: cost ∝ the answer.
    public func autoShipped(in window: TimeWindow, person: String? = nil) throws -> AutoShipReport {
        let store = try store("autoshipped")
        var items: [AutoShippedProjection.Record] = []
        let family = person == nil ? AutoShippedProjection.byTime : AutoShippedProjection.byPerson
        let range = try seqs(of: window)
        try store.postings(family, Array((person ?? "").utf8), from: range.lowerBound) { seq in
            guard seq < range.upperBound else { return false }
            items.append(try autoShipRecord(seq))
            return true
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
        // The policies in force are stored up to the checkpoint: fold the tail only when
        // the action has events in it.
        let stored = try storedStore("audit")
        let store = seqs.allSatisfy { $0 <= stored.checkpoint } ? stored : try self.store("audit")
        let trail = try seqs.map { try auditEntry($0, store) }
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
    /// - parameter including: keeps only the entries it accepts, while paging: a page holds
    ///   `limit` of them, and its token names the last one kept, never a skipped entry
    ///   (an org's auditor pages an actor who also acts in other orgs).
    public func audit(_ index: AuditIndex, in window: TimeWindow = .all, limit: Int = 100,
                      pageToken: String? = nil, including: ((AuditEntry) throws -> Bool)? = nil) throws -> AuditListing {
        guard (1...100_000).contains(limit) else { throw LedgerError(.invalidInput, "limit must be 1…100000, got \(limit)") }
        let store = try store("audit")
        let query = "audit/\(index.family.map(String.init) ?? "all")/" + String(decoding: index.id, as: UTF8.self)
        let range = try seqs(of: window, after: pageToken, query: query) { seq in
            try (index.family.map { try store.hasPosting($0, index.id, seq) } ?? true)
                && (including?(try self.auditEntry(seq, store)) ?? true)
        }
        var listing = AuditListing(entries: [], nextPageToken: nil)
        let visit = { (seq: UInt64) throws -> Bool in
            guard seq < range.upperBound else { return false }
            // A full page gets a token only once another entry it keeps follows: the last
            // page's token is null, whatever the filter skipped after it.
            if listing.entries.count == limit, including == nil {
                let last = listing.entries[limit - 1]
                listing.nextPageToken = self.rowToken(at: last.at, seq: last.seq, query: query)
                return false
            }
            let entry = try self.auditEntry(seq, store)
            guard try including?(entry) ?? true else { return true }
            if listing.entries.count == limit {
                let last = listing.entries[limit - 1]
                listing.nextPageToken = self.rowToken(at: last.at, seq: last.seq, query: query)
                return false
            }
            listing.entries.append(entry)
            return true
        }
        if let family = index.family {
            try store.postings(family, index.id, from: range.lowerBound, visit)
        } else {
            // Every event: the log itself, over the window's seqs.
            for seq in range { guard try visit(seq) else { break } }
        }
        return listing
    }

    /// The audit row of event `seq`, rendered from the log.
    func auditEntry(_ seq: UInt64, _ audit: ProjectionStore) throws -> AuditEntry {
        let event = try loggedEvent(seq)
        let action = try event.actionId.map { try describe($0) }
        // A policy.set governs its own org's actions only (policy.md `policy.org`): the version
        // in force for this event is its org's, so other orgs' policy.sets are passed over.
        // The org is read in place: a policy.set carries a whole policy document, not decoded for this.
        let org = Array(event.org.utf8)
        return AuditEntry(event, action: action, policyInForce: try AuditProjection.policyInForce(audit, at: seq) { policySeq in
            try LogReader(txn: self.txn, dbs: self.dbs).withRawEvent(policySeq) { raw in
                let view = try EventView(stored: raw)
                return view[view.org].elementsEqual(org)
            } ?? false
        })
    }

    /// The auto-ship record of event `seq`, rendered from the log.
    func autoShipRecord(_ seq: UInt64) throws -> AutoShippedProjection.Record {
        let event = try loggedEvent(seq)
        guard case .autoShipped(let a) = event.payload, let id = event.actionId else {
            throw LedgerError(.projectionStale, "the auto-ship postings name seq \(seq), a \(event.type.name)")
        }
        let info = try describe(id)
        return AutoShippedProjection.Record(seq: seq, at: event.at, actionId: id, person: event.person, kind: info.kind,
                                            specialist: info.specialist, surface: info.surface,
                                            policyVersion: a.policyVersion, rule: a.rule, confidence: a.confidence)
    }

    /// Event `seq`, which a projection's posting names.
    /// - throws: `projection_stale` when the log has no such event.
    /// Whether event `seq` is recorded under `org`, read in place without decoding it.
    func loggedOrg(_ seq: UInt64, is org: String) throws -> Bool {
        try LogReader(txn: txn, dbs: dbs).withRawEvent(seq) { raw in
            let view = try EventView(stored: raw)
            return view[view.org].elementsEqual(org.utf8)
        } ?? false
    }

    func loggedEvent(_ seq: UInt64) throws -> Event {
        guard let stored = try LogReader(txn: txn, dbs: dbs).event(seq) else {
            throw LedgerError(.projectionStale, "a projection names seq \(seq), which the log does not hold")
        }
        return stored.event
    }
}
