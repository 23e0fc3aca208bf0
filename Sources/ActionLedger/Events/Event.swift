/// One recorded fact: the envelope every event shares, and its type-specific payload.
///
/// Events are immutable once appended. Their canonical bytes (``EventCodec``) are what the
/// hash chain covers; their JSON form (``Event/json``) is what the CLI, export and Specs show.
public struct Event: Sendable, Equatable {
    /// Dense global sequence number, assigned inside the appending write transaction.
    public var seq: UInt64
    /// When the engine recorded it (engine clock, UTC).
    public var at: Timestamp
    /// Who acted: a person id, or `system:policy` for automatic decisions.
    public var actor: String
    /// The device the person acted from, where one did.
    public var device: String?
    /// The command that produced this event (idempotency key).
    public var commandId: String
    public var org: String
    /// The person the event concerns (the action's creator, the device's owner).
    public var person: String
    /// The action concerned, for `action.*` events.
    public var actionId: String?
    public var payload: Payload

    public init(seq: UInt64 = 0, at: Timestamp, actor: String, device: String? = nil, commandId: String,
                org: String, person: String, actionId: String? = nil, payload: Payload) {
        self.seq = seq
        self.at = at
        self.actor = actor
        self.device = device
        self.commandId = commandId
        self.org = org
        self.person = person
        self.actionId = actionId
        self.payload = payload
    }

    /// The actor recorded for decisions the policy takes by itself.
    public static let systemPolicyActor = "system:policy"
    /// A proposal's actor is this, then its specialist's name.
    public static let specialistPrefix = "specialist:"
    /// The longest actor, in bytes: a proposal's, `specialist:` and a name of up to 256.
    public static let longestActor = specialistPrefix.utf8.count + FieldReader.Limit.name

    /// The event's type, e.g. `action.approved`.
    public var type: EventType { payload.type }

    /// The schema version of this event's encoding (Specs/events.md, "Versioning"): a tap
    /// carrying a signed proof is the newest schema of its type (3 for taps and dismissals,
    /// which record a rules version; 2 for holds and edits), a keyed link and a policy with
    /// proof requirements are schema 2, as is a revocation signed from her device; else
    /// 2 for a proposal or decision judged under rules version 2 or later, else 1.
    public var schemaVersion: UInt8 {
        switch payload {
        case .reviewed(let t), .confirmed(let t): t.proof != nil ? 3 : t.rulesVersion >= 2 ? 2 : 1
        case .approved(let a): a.proof != nil ? 3 : a.rulesVersion >= 2 ? 2 : 1
        case .dismissed(let d): d.proof != nil ? 3 : d.rulesVersion >= 2 ? 2 : 1
        case .held(let h): h.proof != nil ? 2 : 1
        case .edited(let e): e.proof != nil ? 2 : 1
        case .deviceLinked(let d): d.key.map { $0.isRecovered ? 3 : 2 } ?? 1
        case .deviceRevoked(let d): d.proof != nil ? 2 : 1
        case .policySet(let p): p.proofs.isEmpty ? 1 : 2
        default: payload.rulesVersion.map { $0 >= 2 ? 2 : 1 } ?? 1
        }
    }
}

/// Every event type, with its wire code (one byte in the canonical encoding) and
/// current schema version. Codes are never reused.
public enum EventType: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    case actionProposed = 1, actionReviewed, actionConfirmed, actionApproved, actionAutoShipped,
         actionDismissed, actionHeld, actionEdited, actionExecuted, actionFailed, actionExpired
    case deviceLinked = 20, deviceRevoked, deviceKeyRotated, personRecoveryKeySet
    case policySet = 30
    case storeCreated = 40, storeRelyingParty
    case tapRefused = 50
    case tokenIssued = 60, tokenRevoked

    /// The dotted name used in JSON and Specs.
    public var name: String {
        switch self {
        case .actionProposed: "action.proposed"
        case .actionReviewed: "action.reviewed"
        case .actionConfirmed: "action.confirmed"
        case .actionApproved: "action.approved"
        case .actionAutoShipped: "action.auto_shipped"
        case .actionDismissed: "action.dismissed"
        case .actionHeld: "action.held"
        case .actionEdited: "action.edited"
        case .actionExecuted: "action.executed"
        case .actionFailed: "action.failed"
        case .actionExpired: "action.expired"
        case .deviceLinked: "device.linked"
        case .deviceRevoked: "device.revoked"
        case .deviceKeyRotated: "device.key_rotated"
        case .personRecoveryKeySet: "person.recovery_key_set"
        case .policySet: "policy.set"
        case .storeCreated: "store.created"
        case .storeRelyingParty: "store.relying_party"
        case .tapRefused: "tap.refused"
        case .tokenIssued: "token.issued"
        case .tokenRevoked: "token.revoked"
        }
    }

    public var description: String { name }

    /// The newest schema version of this type: decisions and proposals gained their rules
    /// version in schema 2, signed taps their proof in the next one, keyed links their key and
    /// revocations made from a device their signature in
    /// schema 2 (Specs/events.md, "Versioning"); every earlier one stays readable.
    public var schemaVersion: UInt8 {
        switch self {
        case .actionReviewed, .actionConfirmed, .actionApproved, .actionDismissed, .deviceLinked: 3
        case .actionProposed, .actionAutoShipped, .actionHeld, .actionEdited, .policySet, .deviceRevoked: 2
        default: 1
        }
    }

    /// Whether events of this type name an action (`action.*`, and `tap.refused`, which is
    /// kept in its action's stream without changing it).
    public var hasActionId: Bool { name.hasPrefix("action.") || self == .tapRefused }

    public init?(name: String) {
        guard let t = EventType.allCases.first(where: { $0.name == name }) else { return nil }
        self = t
    }
}

/// The type-specific part of an event.
public enum Payload: Sendable, Equatable {
    // Boxed: a proposal is by far the largest payload, and events are copied whole.
    indirect case proposed(Proposal)
    case reviewed(Tap)
    case confirmed(Tap)
    case approved(Approval)
    case autoShipped(AutoShip)
    case dismissed(Dismissal)
    case held(Hold)
    case edited(Edit)
    case executed(Outcome)
    case failed(Outcome)
    case expired
    case deviceLinked(DeviceLink)
    case deviceRevoked(DeviceRevocation)
    case deviceKeyRotated(KeyRotation)
    case recoveryKeySet(RecoveryKeySet)
    case policySet(PolicyDocument)
    case storeCreated(StoreCreation)
    case relyingParty(RelyingParty)
    case tapRefused(TapRefusal)
    case tokenIssued(TokenIssue)
    case tokenRevoked(TokenRevocation)

    /// The rules version recorded by a proposal or decision (1 for events written before
    /// rules were versioned); nil for other events.
    public var rulesVersion: UInt32? {
        switch self {
        case .proposed(let p): p.pinned?.rulesVersion ?? 1
        case .reviewed(let t), .confirmed(let t): t.rulesVersion
        case .approved(let a): a.rulesVersion
        case .autoShipped(let a): a.rulesVersion
        case .dismissed(let d): d.rulesVersion
        default: nil
        }
    }

    public var type: EventType {
        switch self {
        case .proposed: .actionProposed
        case .reviewed: .actionReviewed
        case .confirmed: .actionConfirmed
        case .approved: .actionApproved
        case .autoShipped: .actionAutoShipped
        case .dismissed: .actionDismissed
        case .held: .actionHeld
        case .edited: .actionEdited
        case .executed: .actionExecuted
        case .failed: .actionFailed
        case .expired: .actionExpired
        case .deviceLinked: .deviceLinked
        case .deviceRevoked: .deviceRevoked
        case .deviceKeyRotated: .deviceKeyRotated
        case .recoveryKeySet: .personRecoveryKeySet
        case .policySet: .policySet
        case .storeCreated: .storeCreated
        case .relyingParty: .storeRelyingParty
        case .tapRefused: .tapRefused
        case .tokenIssued: .tokenIssued
        case .tokenRevoked: .tokenRevoked
        }
    }
}

public enum Stakes: String, Sendable, CaseIterable, Comparable {
    case low, medium, high
    var rank: Int { self == .low ? 0 : self == .medium ? 1 : 2 }
    public static func < (a: Stakes, b: Stakes) -> Bool { a.rank < b.rank }
}

public struct Specialist: Sendable, Equatable {
    public var name: String
    public var agent: String
    public init(name: String, agent: String) { self.name = name; self.agent = agent }
}

public struct Target: Sendable, Equatable {
    public var type: String
    public var id: String
    public init(type: String, id: String) { self.type = type; self.id = id }
}

/// What the creator sees and approves. Its ``contentHash`` binds every tap.
public struct Preview: Sendable, Equatable {
    public var text: String
    public var assets: Int
    public var price: Double?
    public init(text: String, assets: Int = 0, price: Double? = nil) {
        self.text = text
        self.assets = assets
        self.price = price
    }
}

/// `action.proposed`.
public struct Proposal: Sendable, Equatable {
    public var specialist: Specialist
    public var surface: String
    public var kind: String
    public var target: Target
    public var stakes: Stakes
    public var confidence: Double
    public var preview: Preview
    public var rationale: String
    public var scheduledFor: Timestamp?
    public var expiresAt: Timestamp?
    /// SHA-256 of the preview's canonical bytes.
    public var contentHash: Digest
    /// What the engine pinned when it recorded the proposal (rules version 2 on; nil in
    /// proposals recorded before): a pending action keeps at least these requirements.
    public var pinned: PinnedRequirements?

    public init(specialist: Specialist, surface: String, kind: String, target: Target, stakes: Stakes,
                confidence: Double, preview: Preview, rationale: String,
                scheduledFor: Timestamp? = nil, expiresAt: Timestamp? = nil) {
        self.init(specialist: specialist, surface: surface, kind: kind, target: target, stakes: stakes,
                  confidence: confidence, preview: preview, rationale: rationale, scheduledFor: scheduledFor,
                  expiresAt: expiresAt, storedContentHash: EventCodec.contentHash(of: preview))
    }

    /// A decoded proposal, with the content hash as stored: verification, not decoding,
    /// judges it, so decoding does not hash the preview again (a SHA-256 per proposal read).
    init(specialist: Specialist, surface: String, kind: String, target: Target, stakes: Stakes, confidence: Double,
         preview: Preview, rationale: String, scheduledFor: Timestamp?, expiresAt: Timestamp?, storedContentHash: Digest) {
        self.specialist = specialist
        self.surface = surface
        self.kind = kind
        self.target = target
        self.stakes = stakes
        self.confidence = confidence
        self.preview = preview
        self.rationale = rationale
        self.scheduledFor = scheduledFor
        self.expiresAt = expiresAt
        contentHash = storedContentHash
    }
}

