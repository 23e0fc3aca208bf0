import Foundation
@testable import ActionLedger

/// Turns the compact events of a scenario's `given` into complete events, filling in what
/// Specs/scenarios/README.md says a runner fills in when omitted. It tracks what the log
/// holds so far (each action's content hash and proposal, the policy version) because
/// several defaults depend on it.
struct ScenarioFill {
    static let start = Timestamp(iso8601: "2026-11-22T08:00:00Z")!
    static let defaultNow = Timestamp(iso8601: "2026-11-22T09:00:00Z")!
    static let org = "quinn-co"
    static let person = "quinn"

    /// The fields an `action.proposed` (or a `propose` command) takes when it omits them.
    static let proposalTemplate: JSONObject = [
        "specialist": ["name": "Sasha", "agent": "content-onlyfans"],
        "surface": "onlyfans", "kind": "publish_post",
        "target": ["type": "account", "id": "of:quinn"],
        "confidence": 0.5,
        "preview": ["text": "New set tonight", "assets": 3],
        "rationale": "Fans are online now",
    ]

    private(set) var events: [Event] = []
    private var proposals: [String: Proposal] = [:]
    private var policyVersion: UInt32 = 0

    /// `template` overlaid with `given`'s members (top level only: a given object replaces
    /// the template's whole).
    static func merged(_ template: JSONObject, _ given: JSONObject) -> JSONObject {
        var out = template
        for (k, v) in given.pairs { out[k] = v }
        return out
    }

    /// Completes the `seq`-th given event (1-based) and records it as appended.
    mutating func fill(_ given: JSON) throws -> Event {
        let seq = events.count + 1
        guard case .object(var o) = given else { throw ScenarioError("given[\(seq - 1)] is not an object") }
        guard case .string(let typeName)? = o["type"], let type = EventType(name: typeName) else {
            throw ScenarioError("given[\(seq - 1)]: missing or unknown \"type\"")
        }
        if let s = o["seq"], s != .number(Double(seq)) {
            throw ScenarioError("given[\(seq - 1)]: seq \(s.serialized()) but it is event \(seq)")
        }
        func byDefault(_ key: String, _ value: JSON) { if o[key] == nil { o[key] = value } }
        byDefault("seq", .number(Double(seq)))
        // Given events are of schema 1 (rules version 1) unless the scenario says otherwise.
        byDefault("schema_version", 1)
        byDefault("at", .string(ScenarioFill.start.adding(milliseconds: Int64(seq - 1) * 60_000).iso8601))
        byDefault("device", .null)
        byDefault("command_id", .string("given-\(seq)"))
        byDefault("org", .string(ScenarioFill.org))
        // The engine records a policy change under its actor, and every admin actor is "operator" here.
        byDefault("person", .string(type == .policySet ? "operator" : ScenarioFill.person))

        guard case .object(var data)? = o["data"] ?? .object([:]) else { throw ScenarioError("given[\(seq - 1)].data is not an object") }
        let actionId: String? = if case .string(let a)? = o["action_id"] { a } else { nil }
        let proposal = actionId.flatMap { proposals[$0] }
        func dataDefault(_ key: String, _ value: JSON?) { if data[key] == nil, let value { data[key] = value } }
        let current = proposal.map { JSON.string($0.contentHash.hex) }
        let version = JSON.number(Double(policyVersion))
        // Placeholder for hashes computed below, from the parsed preview.
        let placeholder = JSON.string(Digest.zero.hex)
        var computeHash = false
        var actor: String
        switch type {
        case .actionProposed:
            data = ScenarioFill.merged(ScenarioFill.proposalTemplate, data)
            computeHash = data["content_hash"] == nil
            dataDefault("content_hash", placeholder)
            actor = if case .string(let n)? = data["specialist"]?["name"] { "specialist:\(n)" } else { "specialist" }
        case .actionEdited:
            computeHash = data["content_hash"] == nil
            dataDefault("content_hash", placeholder)
            actor = ScenarioFill.string(o["person"])
        case .actionReviewed, .actionConfirmed, .actionApproved, .actionAutoShipped:
            dataDefault("content_hash", current)
            dataDefault("policy_version", version)
            if type == .actionApproved, let proposal {
                dataDefault("stakes", .string(proposal.stakes.rawValue))
                dataDefault("rule", .string(Policy.Rule.path(proposal.stakes)))
            }
            if type == .actionAutoShipped {
                dataDefault("rule", .string(Policy.Rule.autoShip))
                dataDefault("confidence", proposal.map { .number($0.confidence) })
            }
            actor = type == .actionAutoShipped ? Event.systemPolicyActor : ScenarioFill.string(o["person"])
        case .actionDismissed:
            dataDefault("reason", "")
            dataDefault("policy_version", version)
            actor = ScenarioFill.string(o["person"])
        case .actionExecuted, .actionFailed:
            dataDefault("outcome", ["device": .null])
            actor = "operator"
        case .actionExpired:
            actor = Event.systemPolicyActor
        case .actionHeld:
            actor = ScenarioFill.string(o["person"])
        case .policySet:
            dataDefault("version", .number(Double(policyVersion + 1)))
            actor = "operator"
        case .deviceRevoked:
            dataDefault("reason", "")
            actor = "operator"
        case .deviceLinked, .deviceKeyRotated, .personRecoveryKeySet, .storeCreated, .tapRefused, .storeRelyingParty, .tokenIssued, .tokenRevoked:
            actor = "operator"
        }
        byDefault("actor", .string(actor))
        o["data"] = .object(data)

        var event: Event
        do {
            event = try Event(json: .object(o))
        } catch let e as LedgerError {
            throw ScenarioError("given[\(seq - 1)] (\(typeName)) is not a valid event: \(e.message)")
        }
        if computeHash {
            switch event.payload {
            case .proposed(var p):
                p.contentHash = EventCodec.contentHash(of: p.preview)
                event.payload = .proposed(p)
            case .edited(var e):
                e.contentHash = EventCodec.contentHash(of: e.preview)
                event.payload = .edited(e)
            default: break
            }
        }
        switch event.payload {
        case .proposed(let p): proposals[actionId ?? ""] = p
        case .edited(let e):
            proposals[actionId ?? ""]?.preview = e.preview
            proposals[actionId ?? ""]?.contentHash = e.contentHash
        case .policySet(let p): policyVersion = p.version
        default: break
        }
        events.append(event)
        return event
    }

    static func string(_ j: JSON?) -> String {
        if case .string(let s)? = j { return s }
        return ""
    }

    /// Replaces every string `"$seqN.path.to.field"` in `value` with that field of given
    /// event N's JSON form (e.g. `"$seq2.data.content_hash"`).
    func resolve(_ value: JSON) throws -> JSON {
        switch value {
        case .string(let s) where s.hasPrefix("$seq"):
            var parts = s.dropFirst(4).split(separator: ".").map(String.init)
            guard let n = parts.first.flatMap({ Int($0) }), (1...events.count).contains(n) else {
                throw ScenarioError("reference \(s): no given event with that seq")
            }
            parts.removeFirst()
            var here = events[n - 1].json()
            for p in parts {
                guard let next = here[p] else { throw ScenarioError("reference \(s): event \(n) has no \(p)") }
                here = next
            }
            return here
        case .array(let items):
            return .array(try items.map(resolve))
        case .object(let o):
            return .object(JSONObject(try o.pairs.map { ($0.0, try resolve($0.1)) }))
        default:
            return value
        }
    }
}

/// Why a scenario could not be run or did not hold.
struct ScenarioError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
