@testable import ActionLedger

/// Reads a scenario's `when` object into the ``CommandRequest`` it names
/// (Specs/scenarios/README.md lists the commands and their fields).
enum ScenarioCommand {
    static let common: Set = ["command", "now", "command_id", "actor"]
    static let fields: [String: Set<String>] = [
        "propose": ["proposal"],
        "review": ["action_id", "device", "seen_content_hash"],
        "confirm": ["action_id", "device", "seen_content_hash"],
        "approve": ["action_id", "device", "user_verified", "seen_content_hash"],
        "dismiss": ["action_id", "device", "reason"],
        "edit": ["action_id", "device", "text"],
        "hold": ["action_id", "device", "until"],
        "execute": ["action_id", "outcome"],
        "fail": ["action_id", "outcome"],
        "expire": ["action_id"],
        "link_device": ["device", "person", "org", "label", "platform"],
        "revoke_device": ["device", "reason"],
        "set_policy": ["policy", "org"],
    ]

    static func request(_ when: JSON) throws -> CommandRequest {
        guard case .object(let w) = when, case .string(let name)? = w["command"], let allowed = fields[name] else {
            throw ScenarioError("when.command must be one of \(fields.keys.sorted().joined(separator: ", "))")
        }
        if let extra = w.keys.first(where: { !common.contains($0) && !allowed.contains($0) }) {
            throw ScenarioError("when.\(extra) is not a field of \(name)")
        }
        func string(_ key: String, _ fallback: String? = nil) throws -> String {
            if case .string(let s)? = w[key] { return s }
            if w[key] == nil, let fallback { return fallback }
            throw ScenarioError("when.\(key) must be a string")
        }
        func time(_ key: String, _ fallback: Timestamp? = nil) throws -> Timestamp {
            if w[key] == nil, let fallback { return fallback }
            guard let t = Timestamp(iso8601: try string(key)) else { throw ScenarioError("when.\(key) is not an ISO-8601 time") }
            return t
        }
        let now = try time("now", ScenarioFill.defaultNow)
        let commandId = try string("command_id", "when-1")
        let actor = try string("actor", "operator")
        let command: Command
        switch name {
        case "propose":
            guard case .object(let p)? = w["proposal"] else { throw ScenarioError("when.proposal must be an object") }
            var input = ScenarioFill.merged(ScenarioFill.proposalTemplate, p)
            if input["org"] == nil { input["org"] = .string(ScenarioFill.org) }
            if input["person"] == nil { input["person"] = .string(ScenarioFill.person) }
            command = .propose(try ProposalInput(json: .object(input)))
        case "review", "confirm", "approve":
            var seen: Digest?
            if w["seen_content_hash"] != nil {
                guard let d = Digest(hex: try string("seen_content_hash")) else {
                    throw ScenarioError("when.seen_content_hash: expected 64 hex digits")
                }
                seen = d
            }
            let verified: Bool = if case .bool(let b)? = w["user_verified"] { b } else { false }
            command = .tap(TapStep(rawValue: name)!, actionId: try string("action_id"), device: try string("device"),
                           userVerified: verified, seenContent: seen)
        case "dismiss":
            command = .dismiss(actionId: try string("action_id"), device: try string("device"), reason: try string("reason", ""))
        case "edit":
            command = .edit(actionId: try string("action_id"), device: try string("device"), text: try string("text"))
        case "hold":
            command = .hold(actionId: try string("action_id"), device: try string("device"), until: try time("until"))
        case "execute", "fail":
            command = .recordOutcome(actionId: try string("action_id"), succeeded: name == "execute",
                                     outcome: w["outcome"] ?? .object([:]))
        case "expire":
            command = .expire(actionId: try string("action_id"))
        case "link_device":
            let device = try string("device")
            guard let platform = Platform(rawValue: try string("platform", "ios")) else { throw ScenarioError("when.platform") }
            command = .linkDevice(device: device, person: try string("person", ScenarioFill.person),
                                  org: try string("org", ScenarioFill.org), label: try string("label", device), platform: platform)
        case "revoke_device":
            command = .revokeDevice(device: try string("device"), reason: try string("reason", ""))
        default:  // set_policy
            command = .setPolicy(try PolicyDocument(json: w["policy"] ?? .object([:])), org: try string("org", ScenarioFill.org))
        }
        return CommandRequest(command, commandId: commandId, now: now, actor: actor)
    }
}
