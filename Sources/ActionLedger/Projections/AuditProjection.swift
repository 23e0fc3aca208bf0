/// The audit index: pointers to every event by actor, device, specialist and surface (an
/// action's whole lifecycle comes from the log's own per-action index; every event by time
/// is the log itself, whose times never go backwards: ``ProjectionSnapshot/audit(_:in:limit:pageToken:)``
/// finds a window's first seq by binary search). The
/// rows an auditor reads are rendered from the log by seq (``AuditEntry/init(_:action:policyInForce:)``),
/// so the projection holds no copy of any event.
///
/// Postings (family ‖ id → seq): `by_actor`, `by_device`, `by_specialist`,
/// `by_surface` (id = the name).
/// Database `policies`: seq (8 BE) → policy version (8 BE) of every `policy.set`, to name
/// the version in force for events that do not carry their own.
public struct AuditProjection: Projection {
    // Computed, not stored: the struct stays empty, so the fold copies it (an existential) without retaining anything.
    public var name: String { "audit" }
    // 6: postings stored as segments. 5: postings are seqs (a window is a seq range). 4: no `by_time`.
    public var version: UInt32 { 6 }
    public var foldCost: Int { 7 }
    public var databases: [String] { ["policies"] }
    public var postings: [String] { ["by_actor", "by_device", "by_specialist", "by_surface"] }
    static let policies = 0
    static let byActor = 0, byDevice = 1, bySpecialist = 2, bySurface = 3

    public init() {}

    public func apply(_ event: Event, to store: ProjectionStore) throws {
        let seq = event.seq
        try store.post(Self.byActor, event.actor.utf8, seq: seq)
        if let device = AuditEntry.device(of: event) { try store.post(Self.byDevice, device.utf8, seq: seq) }
        // A revocation she made from another device of hers is that device's doing too.
        if case .deviceRevoked(let d) = event.payload, let by = event.device, by != d.device {
            try store.post(Self.byDevice, by.utf8, seq: seq)
        }
        if let id = event.actionId {
            let filing: Filing
            if case .proposed(let p) = event.payload {
                filing = Filing(specialist: p.specialist.name, surface: p.surface)
                store.remember(id, filing)
            } else {
                filing = try store.filing(id)
            }
            try store.post(Self.bySpecialist, filing.specialist.utf8, seq: seq)
            try store.post(Self.bySurface, filing.surface.utf8, seq: seq)
        }
        if case .policySet(let p) = event.payload {
            try store.insert(Self.policies, key: Keys.u64(seq), value: Keys.u64(UInt64(p.version)), append: true)
        }
    }

    /// The same fold read in place: only a `policy.set` is decoded.
    public func apply(_ v: EventView, to store: ProjectionStore, decode: () throws -> Event) throws {
        let seq = v.seq
        try store.post(Self.byActor, v[v.actor], seq: seq)
        switch v.type {
        case .deviceLinked, .deviceKeyRotated: try store.post(Self.byDevice, v[try v.payloadString()], seq: seq)
        case .deviceRevoked:
            let concerned = v[try v.payloadString()]
            try store.post(Self.byDevice, concerned, seq: seq)
            if let d = v.device, !v[d].elementsEqual(concerned) { try store.post(Self.byDevice, v[d], seq: seq) }
        default: if let d = v.device { try store.post(Self.byDevice, v[d], seq: seq) }
        }
        if let idRange = v.actionId {
            if v.type == .actionProposed {
                let f = try v.proposalFiling()
                try store.post(Self.bySpecialist, v[f.specialist], seq: seq)
                try store.post(Self.bySurface, v[f.surface], seq: seq)
                store.remember(IdKey(v[idRange]), Filing(specialist: v.string(f.specialist), surface: v.string(f.surface)))
            } else {
                let filing = try store.filing(v[idRange])
                try store.post(Self.bySpecialist, filing.specialist.utf8, seq: seq)
                try store.post(Self.bySurface, filing.surface.utf8, seq: seq)
            }
        }
        if v.type == .policySet { try apply(try decode(), policyOnly: store) }
    }

    private func apply(_ event: Event, policyOnly store: ProjectionStore) throws {
        guard case .policySet(let p) = event.payload else { return }
        try store.insert(Self.policies, key: Keys.u64(event.seq), value: Keys.u64(UInt64(p.version)), append: true)
    }

    /// The policy version in force at `seq`: that of the last `policy.set` at or before it
    /// that `applies` accepts (given its seq; 0 before any).
    static func policyInForce(_ store: ProjectionStore, at seq: UInt64,
                              applies: (UInt64) throws -> Bool = { _ in true }) throws -> UInt32 {
        var version: UInt32 = 0
        try store.scan(policies, from: Keys.u64(seq), reverse: true) { k, v in
            // Each key is the policy.set's seq (big-endian), each value its version: a record of
            // another length is damage, named, never read out of bounds.
            guard k.count == 8, v.count == 8 else {
                throw LedgerError(.projectionStale, "projection audit: a policies record of \(k.count)/\(v.count) bytes, not 8/8; "
                    + "`ledger rebuild --projection audit` rebuilds it from the log", details: ["projection": "audit"])
            }
            guard try applies(Keys.readU64(k)) else { return true }
            version = UInt32(truncatingIfNeeded: Keys.readU64(v))
            return false
        }
        return version
    }
}
