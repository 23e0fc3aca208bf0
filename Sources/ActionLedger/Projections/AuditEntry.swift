/// One line of the audit trail: who did what, from which device, when, under which
/// policy version. The audit projection keeps one per event.
public struct AuditEntry: Sendable, Equatable {
    public var seq: UInt64
    public var type: EventType
    public var at: Timestamp
    public var actor: String
    /// The device the actor used (taps, dismissals, edits, holds), or for `device.*`
    /// events the device concerned.
    public var device: String?
    public var person: String
    public var actionId: String?
    /// The version the event carries (decisions, taps), else the version in force.
    public var policyVersion: UInt32
    public var rule: String?
    public var specialist: Specialist?
    public var surface: String?
    public var kind: String?
    /// A hold's end; for `action.proposed`, the proposal's expiry.
    public var until: Timestamp?
    /// The event's own particulars: a dismissal's reason, an outcome, the new content hash…
    public var detail: String?

    var encoded: [UInt8] {
        var w = BinaryWriter(capacity: 128)
        w.u8(type.rawValue)
        w.timestamp(at)
        w.string(actor)
        w.optional(device) { $0.string($1) }
        w.string(person)
        w.optional(actionId) { $0.string($1) }
        w.varint(UInt64(policyVersion))
        w.optional(rule) { $0.string($1) }
        w.optional(specialist) { $0.string($1.name); $0.string($1.agent) }
        w.optional(surface) { $0.string($1) }
        w.optional(kind) { $0.string($1) }
        w.optional(until) { $0.timestamp($1) }
        w.optional(detail) { $0.string($1) }
        return w.bytes
    }

    init(seq: UInt64, type: EventType, at: Timestamp, actor: String, device: String?, person: String,
         actionId: String?, policyVersion: UInt32) {
        self.seq = seq
        self.type = type
        self.at = at
        self.actor = actor
        self.device = device
        self.person = person
        self.actionId = actionId
        self.policyVersion = policyVersion
    }

    init(seq: UInt64, decoding b: UnsafeRawBufferPointer) throws {
        var r = BinaryReader(b)
        self.seq = seq
        let code = try r.u8()
        guard let t = EventType(rawValue: code) else { throw r.fail("unknown event type \(code)") }
        type = t
        at = try r.timestamp()
        actor = try r.string()
        device = try r.optional { try $0.string() }
        person = try r.string()
        actionId = try r.optional { try $0.string() }
        policyVersion = try EventCodec.readVersion(&r)
        rule = try r.optional { try $0.string() }
        specialist = try r.optional { Specialist(name: try $0.string(), agent: try $0.string()) }
        surface = try r.optional { try $0.string() }
        kind = try r.optional { try $0.string() }
        until = try r.optional { try $0.timestamp() }
        detail = try r.optional { try $0.string() }
    }

    /// The JSON form (`ledger audit …`); absent particulars are `null`.
    public var json: JSON {
        ["seq": .number(Double(seq)), "type": .string(type.name), "actor": .string(actor),
         "device": device.map(JSON.string) ?? .null, "at": .string(at.iso8601), "person": .string(person),
         "action_id": actionId.map(JSON.string) ?? .null, "policy_version": .number(Double(policyVersion)),
         "rule": rule.map(JSON.string) ?? .null,
         "specialist": specialist.map { ["name": .string($0.name), "agent": .string($0.agent)] } ?? .null,
         "surface": surface.map(JSON.string) ?? .null, "kind": kind.map(JSON.string) ?? .null,
         "until": until.map { .string($0.iso8601) } ?? .null, "detail": detail.map(JSON.string) ?? .null]
    }

    /// The CSV columns, in order (`--csv`).
    public static let csvHeader = ["seq", "type", "at", "actor", "device", "person", "action_id", "policy_version",
                                   "rule", "specialist", "surface", "kind", "until", "detail"]

    public var csvRow: [String] {
        [String(seq), type.name, at.iso8601, actor, device ?? "", person, actionId ?? "", String(policyVersion),
         rule ?? "", specialist?.name ?? "", surface ?? "", kind ?? "", until?.iso8601 ?? "", detail ?? ""]
    }
}
