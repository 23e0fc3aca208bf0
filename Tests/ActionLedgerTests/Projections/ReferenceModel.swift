@testable import ActionLedger

/// An independent, deliberately naive model of what the projections answer: plain
/// dictionaries folded from the events, queries by filtering and sorting in memory.
/// It shares no code with the projections (not even the policy's stakes functions).
struct ReferenceModel {
    struct Action {
        var person: String
        var proposal: Proposal
        var proposedAt: Timestamp
        var seq: UInt64
        var open = true
        var steps: [String] = []
        var heldUntil: Timestamp?
        /// Rules version 2: the stakes the model gave it when proposed (a floor), when pinned.
        var pinned: Stakes? = nil
    }

    struct Device: Equatable {
        var person: String
        var label: String
        var platform: Platform
        var revokedAt: Timestamp?
        var lastSeen: Timestamp?
        var taps = 0
    }

    struct Line: Equatable {
        var seq: UInt64
        var type: EventType
        var actor: String
        var device: String?
        var policyVersion: UInt32
    }

    var actions: [String: Action] = [:]
    var raise: [PolicyDocument.StakesRaise] = []
    var policyVersion: UInt32 = 0
    var autoShips: [(seq: UInt64, at: Timestamp, person: String, kind: String)] = []
    var trails: [String: [Line]] = [:]
    var devices: [String: Device] = [:]
    var timeline: [String: [(at: Timestamp, seq: UInt64, type: EventType)]] = [:]

    mutating func fold(_ e: Event) {
        var version = policyVersion
        switch e.payload {
        case .proposed(let p):
            actions[e.actionId!] = Action(person: e.person, proposal: p, proposedAt: e.at, seq: e.seq)
            actions[e.actionId!]!.pinned = p.pinned == nil ? nil : stakes(p)
        case .reviewed(let t), .confirmed(let t):
            version = t.policyVersion
            actions[e.actionId!]!.steps.append(e.type == .actionReviewed ? "review" : "confirm")
        case .approved(let a):
            version = a.policyVersion
            actions[e.actionId!]!.open = false
        case .autoShipped(let a):
            version = a.policyVersion
            actions[e.actionId!]!.open = false
            autoShips.append((e.seq, e.at, e.person, actions[e.actionId!]!.proposal.kind))
        case .dismissed(let d):
            version = d.policyVersion
            actions[e.actionId!]!.open = false
        case .expired:
            actions[e.actionId!]!.open = false
        case .held(let h):
            actions[e.actionId!]!.heldUntil = h.until
        case .edited(let edit):
            actions[e.actionId!]!.proposal.preview = edit.preview
            actions[e.actionId!]!.steps = []
        case .executed, .failed:
            break
        case .deviceLinked(let d):
            devices[d.device] = Device(person: e.person, label: d.label, platform: d.platform)
        case .deviceRevoked(let d):
            devices[d.device]!.revokedAt = e.at
        case .policySet(let p):
            raise = p.raise
            policyVersion = p.version
            version = p.version
        case .storeCreated, .deviceKeyRotated, .recoveryKeySet, .tapRefused, .relyingParty, .tokenIssued, .tokenRevoked:
            break
        }
        if let d = e.device, [.actionReviewed, .actionConfirmed, .actionApproved, .actionDismissed, .actionHeld,
                              .actionEdited].contains(e.type) {
            devices[d]!.taps += 1
            if devices[d]!.lastSeen.map({ $0 < e.at }) ?? true { devices[d]!.lastSeen = e.at }
        }
        if let id = e.actionId {
            trails[id, default: []].append(Line(seq: e.seq, type: e.type, actor: e.actor, device: e.device, policyVersion: version))
        }
        timeline[e.person, default: []].append((e.at, e.seq, e.type))
    }

    /// An action's stakes now: the policy's raise, never below what it was pinned at.
    func stakes(_ a: Action) -> Stakes { max(stakes(a.proposal), a.pinned ?? .low) }

    func stakes(_ p: Proposal) -> Stakes {
        var s = p.stakes
        for r in raise where (r.kind == nil || r.kind == p.kind) && (r.surface == nil || r.surface == p.surface) {
            if r.stakes > s { s = r.stakes }
        }
        return s
    }

    /// (action id, stakes, next tap, taps) of what needs `person` at `now`, in feed order.
    func today(_ person: String, now: Timestamp) -> [(String, Stakes, String, Int)] {
        let due = actions.filter { _, a in
            a.person == person && a.open && !(a.heldUntil.map { $0 > now } ?? false)
                && !(a.proposal.expiresAt.map { $0 <= now } ?? false)
        }
        return due.sorted { x, y in
            let (sx, sy) = (stakes(x.value), stakes(y.value))
            if sx != sy { return sx > sy }
            if x.value.proposedAt != y.value.proposedAt { return x.value.proposedAt < y.value.proposedAt }
            return x.value.seq < y.value.seq
        }.map { id, a in
            let s = stakes(a)
            let path = s == .low ? ["approve"] : s == .medium ? ["review", "approve"] : ["review", "confirm", "approve"]
            // Taps match the path in order; one of a step this path lacks was made under other stakes.
            var done = 0
            for step in a.steps where done < path.count && path[done] == step { done += 1 }
            return (id, s, done < path.count ? path[done] : "approve", done)
        }
    }

    /// Drafts that need `person` at `now` per specialist name.
    func drafts(_ person: String, now: Timestamp) -> [String: Int] {
        var out: [String: Int] = [:]
        for (id, _, _, _) in today(person, now: now) { out[actions[id]!.proposal.specialist.name, default: 0] += 1 }
        return out
    }

    func autoShipped(from: Timestamp, to: Timestamp, person: String? = nil) -> [UInt64] {
        autoShips.filter { $0.at >= from && $0.at < to && (person == nil || $0.person == person) }
            .sorted { ($0.at, $0.seq) < ($1.at, $1.seq) }.map(\.seq)
    }
}
