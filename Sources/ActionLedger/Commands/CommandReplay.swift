/// When a used command id is answered with the original result: only to the same command
/// from the same device (an offline queue replaying its own tap, even from a device revoked
/// since). Anyone else is judged as if the id were new (Specs/cli.md, "Command ids").
enum CommandReplay {
    struct RollBack: Error {}

    /// Whether `command` is the one that appended `first` (the first event of its id).
    static func answers(_ command: Command, _ first: Event) -> Bool {
        guard kind(of: command) == kind(of: first), command.actionId == first.actionId else { return false }
        switch command {
        case .tap(_, _, let device, _, _), .dismiss(_, let device, _), .edit(_, let device, _), .hold(_, let device, _):
            return first.device == device
        case .linkDevice(let device, let person, _, _, _), .linkKeyedDevice(let device, let person, _, _, _, _, _):
            if case .deviceLinked(let d) = first.payload { return d.device == device && first.person == person }
            return false
        case .revokeDevice(let device, _):
            if case .deviceRevoked(let d) = first.payload { return d.device == device }
            return false
        case .rotateDeviceKey(let device, let key):
            if case .deviceKeyRotated(let k) = first.payload { return k.device == device && k.key == key }
            return false
        case .setRecoveryKey(let person, let key, _):
            if case .recoveryKeySet(let s) = first.payload { return first.person == person && s.key == key }
            return false
        case .setPolicy(_, let org):
            return first.org == org
        case .setRelyingParty(let rp):
            if case .relyingParty(let recorded) = first.payload { return recorded == rp }
            return false
        case .propose, .recordOutcome, .expire:
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
}
