/// Each person's timeline: every event that concerns them, in time order.
///
/// Database `timeline`: person ‖ 0x00 ‖ time(at) ‖ seq → ``ActivityItem`` (type, actor,
/// device, action, a one-line summary). Filters by type are applied while reading.
public struct ActivityProjection: Projection {
    public let name = "activity"
    // 2: the logical databases share one LMDB database (ProjectionStore).
    public let version: UInt32 = 2
    public let databases = ["timeline"]

    public init() {}

    public func apply(_ event: Event, to store: ProjectionStore) throws {
        let item = ActivityItem(seq: event.seq, at: event.at, type: event.type, actor: event.actor, device: event.device,
                                actionId: event.actionId, summary: Self.summary(event.payload))
        try store.insert(0, key: ProjectionKeys.timed(event.person, event.at, event.seq), value: item.encoded)
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
        case .tapRefused(let t): "refused \(t.step.rawValue): \(t.code)"
        case .policySet(let p): "set policy v\(p.version)"
        case .storeCreated(let c): "created the store" + (c.testClock ? " (test clock)" : "") + (c.demo ? " (demo)" : "")
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

    var encoded: [UInt8] {
        var w = BinaryWriter(capacity: 96)
        w.u8(type.rawValue)
        w.string(actor)
        w.optional(device) { $0.string($1) }
        w.optional(actionId) { $0.string($1) }
        w.string(summary)
        return w.bytes
    }

    init(seq: UInt64, at: Timestamp, type: EventType, actor: String, device: String?, actionId: String?, summary: String) {
        self.seq = seq
        self.at = at
        self.type = type
        self.actor = actor
        self.device = device
        self.actionId = actionId
        self.summary = summary
    }

    /// Decodes a `timeline` entry; `prefixLength` is the person's key prefix.
    init(key: UnsafeRawBufferPointer, prefixLength: Int, value: UnsafeRawBufferPointer) throws {
        var r = BinaryReader(value)
        at = ProjectionKeys.time(key, at: prefixLength)
        seq = Keys.readU64(key, at: prefixLength + 8)
        let code = try r.u8()
        guard let t = EventType(rawValue: code) else { throw r.fail("unknown event type \(code)") }
        type = t
        actor = try r.string()
        device = try r.optional { try $0.string() }
        actionId = try r.optional { try $0.string() }
        summary = try r.string()
    }

    public var json: JSON {
        ["seq": .number(Double(seq)), "at": .string(at.iso8601), "type": .string(type.name), "actor": .string(actor),
         "device": device.map(JSON.string) ?? .null, "action_id": actionId.map(JSON.string) ?? .null,
         "summary": .string(summary)]
    }
}
