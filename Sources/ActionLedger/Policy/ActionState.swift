/// Where an action stands: everything the policy needs to judge the next command.
/// Folded from the action's events by ``ActionState/apply(_:policy:)``.
public struct ActionState: Sendable, Equatable {
    public enum Status: String, Sendable {
        case pending, approved, autoShipped = "auto_shipped", dismissed, executed, failed, expired
    }

    /// A counted tap: which step, from which device, when.
    public struct TapRecord: Sendable, Equatable {
        public var step: TapStep
        public var device: String
        public var at: Timestamp
        public var seq: UInt64
    }

    /// The first (and only) decision on the action.
    public struct DecisionRecord: Sendable, Equatable {
        public var type: EventType
        public var actor: String
        public var device: String?
        public var at: Timestamp
        public var seq: UInt64
        public var policyVersion: UInt32
        public var rule: String
    }

    public var actionId: String
    public var org: String
    public var person: String
    public var proposal: Proposal
    public var proposedAt: Timestamp
    public var status: Status
    /// Taps on the current content, in order; an edit empties it.
    public var taps: [TapRecord]
    public var heldUntil: Timestamp?
    public var decision: DecisionRecord?
    public var edits: Int
    /// The seq of the action's proposal, its first event.
    public var proposalSeq: UInt64
    public var lastSeq: UInt64

    /// The hash of what the creator currently sees (after edits).
    public var contentHash: Digest { proposal.contentHash }

    init(proposed event: Event, proposal: Proposal) {
        actionId = event.actionId ?? ""
        org = event.org
        person = event.person
        self.proposal = proposal
        proposedAt = event.at
        status = .pending
        taps = []
        heldUntil = nil
        decision = nil
        edits = 0
        proposalSeq = event.seq
        lastSeq = event.seq
    }

    /// The state name shown to people at `now`: `held` while a hold is running.
    public func displayState(now: Timestamp) -> String {
        // Expiry first: a hold running past `expires_at` no longer keeps anything open.
        if isExpired(at: now) { return "expired" }
        if status == .pending, let h = heldUntil, h > now { return "held" }
        return status.rawValue
    }

    /// Whether the action is pending past its `expires_at` at `now`, so it can no longer be
    /// decided (events.md), whether or not `action.expired` has been recorded yet.
    public func isExpired(at now: Timestamp) -> Bool {
        guard status == .pending, let e = proposal.expiresAt else { return false }
        return e <= now
    }

    /// Applies one of this action's events (other than `action.proposed`).
    mutating func apply(_ event: Event) {
        lastSeq = event.seq
        func decide(_ policyVersion: UInt32, _ rule: String) {
            decision = DecisionRecord(type: event.type, actor: event.actor, device: event.device, at: event.at,
                                      seq: event.seq, policyVersion: policyVersion, rule: rule)
        }
        switch event.payload {
        case .reviewed, .confirmed:
            taps.append(TapRecord(step: event.type == .actionReviewed ? .review : .confirm,
                                  device: event.device ?? "", at: event.at, seq: event.seq))
        case .approved(let a):
            taps.append(TapRecord(step: .approve, device: event.device ?? "", at: event.at, seq: event.seq))
            status = .approved
            decide(a.policyVersion, a.rule)
        case .autoShipped(let a):
            status = .autoShipped
            decide(a.policyVersion, a.rule)
        case .dismissed(let d):
            status = .dismissed
            decide(d.policyVersion, "dismiss")
        case .held(let h):
            heldUntil = h.until
        case .edited(let e):
            proposal.preview = e.preview
            proposal.contentHash = e.contentHash
            taps = []
            edits += 1
        case .executed: status = .executed
        case .failed: status = .failed
        case .expired: status = .expired
        case .proposed, .deviceLinked, .deviceRevoked, .deviceKeyRotated, .recoveryKeySet, .policySet, .storeCreated, .tapRefused, .relyingParty, .tokenIssued, .tokenRevoked: break
        }
    }
}

/// A step on the tap path.
public enum TapStep: String, Sendable, CaseIterable {
    case review, confirm, approve
}

/// What the policy knows of a device (folded from its link and revocation events; when it
/// was last used is the devices projection's business, not the policy's).
public struct DeviceState: Sendable, Equatable {
    public var device: String
    public var person: String
    public var org: String
    public var label: String
    public var platform: Platform
    public var linkedAt: Timestamp
    public var revokedAt: Timestamp?
    /// The key its taps must be signed with; nil for a device that signs nothing.
    public var key: DeviceKey? = nil
    /// The seq of the event that put `key` in force: the link, or the latest rotation. A key
    /// rotated out and later rotated back is in force from a new seq (a device session made
    /// under it the first time stays ended).
    public var keySeq: UInt64 = 0

    public var isRevoked: Bool { revokedAt != nil }

    /// Throws `device_revoked`, with the time it was revoked (cli.md's details), if it was.
    public func requireLive() throws {
        guard let at = revokedAt else { return }
        throw LedgerError(.deviceRevoked, "device \(device) was revoked at \(at.iso8601)",
                          details: ["device": .string(device), "revoked_at": .string(at.iso8601)])
    }
}
