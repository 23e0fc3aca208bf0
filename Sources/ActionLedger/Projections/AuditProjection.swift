/// The audit index: one ``AuditEntry`` per event, reachable by action (its whole
/// lifecycle, through the log's per-action index), actor, device, time, specialist and surface.
///
/// Databases (index values are empty; the entry is read from `entries` by seq):
/// - `by_actor`, `by_device`, `by_specialist`, `by_surface`: id ‖ 0x00 ‖ time(at) ‖ seq.
/// - `by_time`: time(at) ‖ seq.
/// - `actions`: action id → specialist, surface, kind (to describe later events of the action).
/// - `state`: `policy_version` → the version in force (8 BE), folded from `policy.set`.
/// - `entries`: seq → ``AuditEntry``. Last, so that its keys (seqs) are the tree's last and
///   each one is appended at the right edge (`MDB_APPEND`).
public struct AuditProjection: Projection {
    public let name = "audit"
    // 2: one LMDB database for all the indexes; `by_action` dropped (the log's own
    // per-action index answers it).
    public let version: UInt32 = 2
    public let databases = ["by_actor", "by_device", "by_time", "by_specialist", "by_surface", "actions", "state", "entries"]
    static let byActor = 0, byDevice = 1, byTime = 2, bySpecialist = 3, bySurface = 4
    static let actions = 5, state = 6, entries = 7
    static let policyKey = Array("policy_version".utf8)

    public init() {}

    public func apply(_ event: Event, to store: ProjectionStore) throws {
        let inForce = try store.withValue(Self.state, key: Self.policyKey) { UInt32(truncatingIfNeeded: Keys.readU64($0)) } ?? 0
        var e = AuditEntry(seq: event.seq, type: event.type, at: event.at, actor: event.actor, device: event.device,
                           person: event.person, actionId: event.actionId, policyVersion: inForce)
        switch event.payload {
        case .proposed(let p):
            var w = BinaryWriter(capacity: 64)
            w.string(p.specialist.name)
            w.string(p.specialist.agent)
            w.string(p.surface)
            w.string(p.kind)
            try store.insert(Self.actions, key: try actionKey(event), value: w.bytes)
            e.detail = "\(p.stakes.rawValue) stakes, confidence \(JSON.format(p.confidence))"
            e.until = p.expiresAt
        case .reviewed(let t), .confirmed(let t):
            e.policyVersion = t.policyVersion
        case .approved(let a):
            e.policyVersion = a.policyVersion
            e.rule = a.rule
            e.detail = "\(a.stakes.rawValue) stakes" + (a.userVerified ? ", user verified" : "")
        case .autoShipped(let a):
            e.policyVersion = a.policyVersion
            e.rule = a.rule
            e.detail = "confidence \(JSON.format(a.confidence))"
        case .dismissed(let d):
            e.policyVersion = d.policyVersion
            e.rule = Policy.Rule.dismiss
            e.detail = d.reason
        case .held(let h):
            e.until = h.until
        case .edited(let edit):
            e.detail = "content \(edit.contentHash.hex)"
        case .executed(let o), .failed(let o):
            e.detail = o.outcome
        case .expired:
            break
        case .deviceLinked(let d):
            e.device = d.device
            e.detail = "\(d.label) (\(d.platform.rawValue))"
        case .deviceRevoked(let d):
            e.device = d.device
            e.detail = d.reason
        case .deviceKeyRotated(let k): e.device = k.device
        case .tapRefused(let t): e.detail = "\(t.step.rawValue) refused: \(t.code)"
        case .policySet(let p):
            e.policyVersion = p.version
            try store.put(Self.state, key: Self.policyKey, value: Keys.u64(UInt64(p.version)))
        case .storeCreated(let c):
            e.detail = c.testClock ? "test clock" : ""
        }
        if let id = event.actionId {
            guard let info = try store.withValue(Self.actions, key: Array(id.utf8), { b in
                var r = BinaryReader(b)
                return (Specialist(name: try r.string(), agent: try r.string()), try r.string(), try r.string())
            }) else {
                throw LedgerError(.projectionStale, "\(event.type.name) for action \(id), which was never proposed")
            }
            (e.specialist, e.surface, e.kind) = info
        }
        try index(e, store)
    }

    private func actionKey(_ event: Event) throws -> [UInt8] {
        guard let id = event.actionId else { throw LedgerError(.corruptEvent, "\(event.type.name) without an action id") }
        return Array(id.utf8)
    }

    private func index(_ e: AuditEntry, _ store: ProjectionStore) throws {
        let none: [UInt8] = []
        // Every key below ends in the event's seq: new by construction, so `insert`.
        try store.insert(Self.entries, key: Keys.u64(e.seq), value: e.encoded, append: true)
        try store.insert(Self.byActor, key: ProjectionKeys.timed(e.actor, e.at, e.seq), value: none)
        if let d = e.device { try store.insert(Self.byDevice, key: ProjectionKeys.timed(d, e.at, e.seq), value: none) }
        try store.insert(Self.byTime, key: ProjectionKeys.timed(nil, e.at, e.seq), value: none)
        if let s = e.specialist {
            try store.insert(Self.bySpecialist, key: ProjectionKeys.timed(s.name, e.at, e.seq), value: none)
        }
        if let s = e.surface { try store.insert(Self.bySurface, key: ProjectionKeys.timed(s, e.at, e.seq), value: none) }
    }
}
