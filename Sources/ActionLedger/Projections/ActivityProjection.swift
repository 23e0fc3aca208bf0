/// Each person's timeline: a pointer to every event that concerns them, in time order.
/// Lines are rendered from the log when queried; filters by type are applied while reading.
///
/// Postings: `timeline` (id = the person) → seq.
public struct ActivityProjection: Projection {
    // Computed, not stored: the struct stays empty, so the fold copies it (an existential) without retaining anything.
    public var name: String { "activity" }
    // 5: postings stored as segments. 4: postings are seqs. 3: postings only; lines rendered from the log.
    public var version: UInt32 { 5 }
    public var foldCost: Int { 3 }
    public var databases: [String] { [] }
    public var postings: [String] { ["timeline"] }

    public init() {}

    public func apply(_ event: Event, to store: ProjectionStore) throws {
        try store.post(0, event.person.utf8, seq: event.seq)
    }

    public func apply(_ v: EventView, to store: ProjectionStore, decode: () throws -> Event) throws {
        try store.post(0, v[v.person], seq: v.seq)
    }

    static func summary(_ payload: Payload) -> String {
        switch payload {
        case .proposed(let p):
            "\(p.specialist.name) proposed \(p.kind) on \(p.surface) (\(p.stakes.rawValue) stakes)"
        case .reviewed: "reviewed"
        case .confirmed: "confirmed"
        case .approved(let a): "approved under policy v\(a.policyVersion) (\(a.rule))"
        case .autoShipped(let a): "auto-shipped under policy v\(a.policyVersion) (\(a.rule))"
        case .dismissed(let d): "dismissed: \(d.reason)"
        case .held(let h): "held until \(h.until.iso8601)"
        case .edited: "edited"
        case .executed: "executed"
        case .failed: "failed"
        case .expired: "expired"
        case .deviceLinked(let d): "linked \(d.device) (\(d.label), \(d.platform.rawValue))"
        case .deviceRevoked(let d): "revoked \(d.device): \(d.reason)"
        case .deviceKeyRotated(let k): "rotated \(k.device)'s key"
        case .recoveryKeySet(let s): "set the recovery key (\(s.trustText))"
        case .tapRefused(let t): "refused \(t.step.rawValue): \(t.code)"
        case .relyingParty(let rp): "set relying party \(rp.rpId)"
        case .policySet(let p): "set policy v\(p.version)"
        case .storeCreated(let c): "created the store" + (c.testClock ? " (test clock)" : "") + (c.demo ? " (demo)" : "")
        case .tokenIssued(let t): "issued token \(t.tokenId) (\(t.scope.rawValue))"
        case .tokenRevoked(let t): "revoked token \(t.tokenId)"
        }
    }
}

/// One line of a person's timeline.
public struct ActivityItem: Sendable, Equatable {
    public var seq: UInt64
    public var at: Timestamp
    public var type: EventType
    public var actor: String
    public var device: String?
    public var actionId: String?
    public var summary: String

    init(seq: UInt64, at: Timestamp, type: EventType, actor: String, device: String?, actionId: String?, summary: String) {
        self.seq = seq
        self.at = at
        self.type = type
        self.actor = actor
        self.device = device
        self.actionId = actionId
        self.summary = summary
    }

    /// The line of `event`.
    init(_ event: Event) {
        self.init(seq: event.seq, at: event.at, type: event.type, actor: event.actor, device: event.device,
                  actionId: event.actionId, summary: ActivityProjection.summary(event.payload))
    }

    public var json: JSON {
        ["seq": .number(Double(seq)), "at": .string(at.iso8601), "type": .string(type.name), "actor": .string(actor),
         "device": device.map(JSON.string) ?? .null, "action_id": actionId.map(JSON.string) ?? .null,
         "summary": .string(summary)]
    }
}
