/// One line of the audit trail: who did what, from which device, when, under which
/// policy version. Rendered from the event when queried; the audit projection
/// keeps only pointers.
public struct AuditEntry: Sendable, Equatable {
    public var seq: UInt64
    public var type: EventType
    public var at: Timestamp
    public var actor: String
    /// The device the actor used (taps, dismissals, edits, holds), or for `device.*`
    /// events the device concerned (a revocation made from another device names that one
    /// in `detail` and is listed under both).
    public var device: String?
    public var person: String
    /// The org the event is recorded under (not printed: what an org's auditor may see).
    public var org: String = ""
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

    /// The device an event is filed under: the one the actor used, or for `device.*`
    /// events the device concerned.
    static func device(of event: Event) -> String? {
        switch event.payload {
        case .deviceLinked(let d): d.device
        case .deviceRevoked(let d): d.device
        case .deviceKeyRotated(let k): k.device
        default: event.device
        }
    }

    /// The row of `event`, described by its action's proposal (`action`, for action
    /// events) and the policy version in force at its seq.
    init(_ event: Event, action: ActionInfo?, policyInForce: UInt32) {
        self.init(seq: event.seq, type: event.type, at: event.at, actor: event.actor, device: Self.device(of: event),
                  person: event.person, actionId: event.actionId, policyVersion: policyInForce)
        org = event.org
        if let action {
            specialist = action.specialist
            surface = action.surface
            kind = action.kind
        }
        switch event.payload {
        case .proposed(let p):
            detail = "\(p.stakes.rawValue) stakes, confidence \(JSON.format(p.confidence))"
            until = p.expiresAt
        case .reviewed(let t), .confirmed(let t):
            policyVersion = t.policyVersion
        case .approved(let a):
            policyVersion = a.policyVersion
            rule = a.rule
            // Worded so a reader who skips `proof_level` is not misled (Approval.userVerificationText).
            detail = "\(a.stakes.rawValue) stakes" + (a.userVerificationText.map { ", " + $0 } ?? "")
        case .autoShipped(let a):
            policyVersion = a.policyVersion
            rule = a.rule
            detail = "confidence \(JSON.format(a.confidence))"
        case .dismissed(let d):
            policyVersion = d.policyVersion
            rule = Policy.Rule.dismiss
            detail = d.reason
        case .held(let h):
            until = h.until
        case .edited(let edit):
            detail = "content \(edit.contentHash.hex)"
        case .executed(let o), .failed(let o):
            detail = o.outcome
        case .expired:
            break
        case .deviceLinked(let d):
            // The introduction chain: who vouched for the key (Specs/statements.md §1.1).
            detail = "\(d.label) (\(d.platform.rawValue))" + (d.key.map { ", key \($0.fingerprint.hex.prefix(16))…, \($0.trustText)" } ?? "")
        case .deviceRevoked(let d):
            detail = event.device.map { "from \($0)" + (d.reason.isEmpty ? "" : ": " + d.reason) } ?? d.reason
        case .deviceKeyRotated(let k): detail = "key \(k.key.fingerprint.hex.prefix(16))…, \(k.key.trustText)"
        case .recoveryKeySet(let s): detail = "recovery key \(s.key.fingerprint.hex.prefix(16))…, \(s.trustText)"
        case .tapRefused(let t): detail = "\(t.step.rawValue) refused: \(t.code)"
        case .relyingParty(let rp): detail = rp.rpId
        case .policySet(let p):
            policyVersion = p.version
        case .storeCreated(let c):
            detail = c.testClock ? "test clock" : ""
        case .tokenIssued, .tokenRevoked:
            break
        }
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
