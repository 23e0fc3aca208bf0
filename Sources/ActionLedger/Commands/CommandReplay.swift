/// When a used command id is answered with the original result: only to the same command
/// from the same device (an offline queue replaying its own tap, even from a device revoked
/// since). Anyone else is judged as if the id were new (Specs/cli.md, "Command ids").
enum CommandReplay {
    struct RollBack: Error {}

    /// Whether `command` is the one that appended `first` (the first event of its id).
    static func answers(_ command: Command, _ first: Event) -> Bool {
        // A recorded refusal answers the step it refused, from its device: a proof is
        // used once, refused or not (Specs/policy.md §7).
        if case .tapRefused(let r) = first.payload {
            return kind(of: command) == r.step.rawValue && command.actionId == first.actionId
                && CommandStatement.deviceId(command) == first.device
        }
        guard kind(of: command) == kind(of: first), command.actionId == first.actionId else { return false }
        switch command {
        case .tap(_, _, let device, _, _):
            return first.device == device
        // A change is the same command only with the same content: a retry whose reason, text
        // or end changed is another command under a used id, never answered "done" with the old.
        case .dismiss(_, let device, let reason):
            if case .dismissed(let d) = first.payload { return first.device == device && d.reason == reason }
            return false
        case .edit(_, let device, let text):
            if case .edited(let e) = first.payload { return first.device == device && e.preview.text == text }
            return false
        case .hold(_, let device, let until):
            if case .held(let h) = first.payload { return first.device == device && h.until == until }
            return false
        case .linkDevice(let device, let person, _, _, _), .linkKeyedDevice(let device, let person, _, _, _, _, _):
            if case .deviceLinked(let d) = first.payload { return d.device == device && first.person == person }
            return false
        case .revokeDevice(let device, _, let by, _):
            if case .deviceRevoked(let d) = first.payload { return d.device == device && first.device == by }
            return false
        case .rotateDeviceKey(let device, let key):
            // The same rotation: device, key, protection and signer. Not the signature's bytes: a
            // retried `rotate-key` signs again, and ECDSA signatures differ each time.
            if case .deviceKeyRotated(let k) = first.payload {
                return k.device == device && k.key.fingerprint == key.fingerprint && k.key.protection == key.protection
                    && k.key.introducer == key.introducer
            }
            return false
        case .setRecoveryKey(let person, let key, _):
            if case .recoveryKeySet(let s) = first.payload { return first.person == person && s.key == key }
            return false
        case .setPolicy(var document, let org):
            // The same document, not merely the same org: a retry whose document changed must
            // not be answered "done" with the old one (the version the engine filled in aside).
            guard case .policySet(let recorded) = first.payload else { return false }
            if document.version == 0 { document.version = recorded.version }
            return first.org == org && document == recorded
        case .setRelyingParty(let rp):
            if case .relyingParty(let recorded) = first.payload { return recorded == rp }
            return false
        case .propose(let input):
            // The same proposal, not merely the same action id: a used id never answers
            // another caller with someone else's proposal.
            guard case .proposed(var p) = first.payload else { return false }
            p.pinned = input.proposal.pinned  // what the engine added: the policy it pinned
            return first.org == input.org && first.person == input.person && p == input.proposal
        case .recordOutcome(_, let succeeded, let outcome):
            // The same status and outcome (the engine adds the deciding device when absent).
            let recorded: Outcome
            switch first.payload {
            case .executed(let o) where succeeded: recorded = o
            case .failed(let o) where !succeeded: recorded = o
            default: return false
            }
            guard case .object(let given) = outcome, case .object(let stored)? = try? JSONParser.parse(recorded.outcome) else { return false }
            // The same fields, the device the engine added aside.
            let added: Set<String> = given["device"] == nil ? ["device"] : []
            return Set(given.keys) == Set(stored.keys).subtracting(added) && given.pairs.allSatisfy { stored[$0.0] == $0.1 }
        case .expire:
            return true
        }
    }

    static func kind(of command: Command) -> String {
        switch command {
        case .propose: "propose"
        case .tap(let step, _, _, _, _): step.rawValue
        case .dismiss: "dismiss"
        case .edit: "edit"
        case .hold: "hold"
        case .recordOutcome: "outcome"
        case .expire: "expire"
        case .linkDevice, .linkKeyedDevice: "link"
        case .revokeDevice: "revoke"
        case .rotateDeviceKey: "rotate"
        case .setRecoveryKey: "recovery_key"
        case .setPolicy: "policy"
        case .setRelyingParty: "relying_party"
        }
    }

    static func kind(of event: Event) -> String {
        switch event.payload {
        case .proposed, .autoShipped: "propose"
        case .reviewed: "review"
        case .confirmed: "confirm"
        case .approved: "approve"
        case .dismissed: "dismiss"
        case .edited: "edit"
        case .held: "hold"
        case .executed, .failed: "outcome"
        case .expired: "expire"
        case .deviceLinked: "link"
        case .deviceRevoked: "revoke"
        case .deviceKeyRotated: "rotate"
        case .recoveryKeySet: "recovery_key"
        case .policySet: "policy"
        case .storeCreated: "create"
        case .tapRefused: "refused"
        case .relyingParty: "relying_party"
        case .tokenIssued, .tokenRevoked: "token"
        }
    }

    /// The events a used command id appended, as its `commands` entry `done` names them. The
    /// index is bookkeeping outside the chain: a retry is answered only with events the log
    /// itself records under this id, never another command's.
    /// - throws: `corrupt_event` when the entry names any other.
    static func events(of commandId: String, _ done: (first: UInt64, count: Int), _ reader: LogReader) throws -> [StoredEvent] {
        let events = try (done.first..<done.first + UInt64(done.count)).compactMap { try reader.event($0) }
        if events.count != done.count || events.contains(where: { $0.event.commandId != commandId }) {
            throw LedgerError(.corruptEvent, "the commands index entry of \(commandId) names seqs \(done.first)…"
                + "\(done.first + UInt64(done.count) - 1), which the log does not record under that id: run ledger verify",
                              details: ["index": "commands", "key": .string(commandId)])
        }
        return events
    }

    /// The original result of the command that used `request`'s id, from its events.
    static func result(_ request: CommandRequest, _ events: [StoredEvent], _ reader: LogReader) throws -> CommandResult {
        let action = try request.command.actionId.flatMap { try reader.actionState($0) }
        var result = CommandResult(commandId: request.commandId, events: events, replayed: true, action: action,
                                   nextTap: try action.flatMap { Policy.nextTap($0, under: try reader.policy(org: $0.org)) })
        // The original result of a recorded refusal is that refusal, again.
        if let first = events.first, case .tapRefused(let r) = first.event.payload {
            let code = LedgerError.Code.all.first { $0.rawValue == r.code } ?? .invalidInput
            result.refusal = LedgerError(code, "\(r.step.rawValue) of \(first.event.actionId ?? "?") by \(first.event.device ?? "?") "
                + "was refused (\(r.code)) and recorded as tap.refused, seq \(first.seq); its command id and proof are spent: "
                + "sign a new statement with a new command id",
                details: ["recorded_seq": .number(Double(first.seq)), "replayed": .bool(true)])
        }
        return result
    }
}
