/// The statement each device command makes (Specs/statements.md §2), built from the
/// command, the action and the store: what `ledger statement` prints, the CLI's `--key`
/// signs and the engine verifies.
enum CommandStatement {
    /// The statement `command` makes on action `s`, or nil for a command no device signs.
    /// The content hash a statement of `command` names: the proof's, else the tap's seen
    /// content, else the action's current content (as ``statement(_:commandId:claimedAt:content:action:storeId:)`` builds it).
    static func content(_ command: Command, proof: ProofInput, action s: ActionState) -> Digest {
        if let c = proof.contentHash { return c }
        if case .tap(_, _, _, _, let seen?) = command { return seen }
        return s.contentHash
    }

    static func statement(_ command: Command, commandId: String, claimedAt: Timestamp, content: Digest?,
                          action s: ActionState, storeId: Digest) -> Statement.Tap? {
        func make(_ step: Statement.Step, _ device: String, _ seen: Digest?) -> Statement.Tap {
            Statement.Tap(storeId: storeId, org: s.org, actionId: s.actionId, step: step,
                          contentHash: content ?? seen ?? s.contentHash, device: device, commandId: commandId, claimedAt: claimedAt)
        }
        switch command {
        case .tap(let step, _, let device, _, let seen):
            return make(Statement.Step(rawValue: step.rawValue)!, device, seen)
        case .dismiss(_, let device, let reason):
            var t = make(.dismiss, device, nil)
            t.reason = reason
            return t
        case .edit(_, let device, let text):
            var t = make(.edit, device, nil)
            t.text = text
            return t
        case .hold(_, let device, let until):
            var t = make(.hold, device, nil)
            t.until = until
            return t
        default:
            return nil
        }
    }

    static func deviceId(_ command: Command) -> String? {
        switch command {
        case .tap(_, _, let d, _, _), .dismiss(_, let d, _), .edit(_, let d, _), .hold(_, let d, _): d
        default: nil
        }
    }
}

extension Ledger {
    /// The statement a device must sign for `command` (``Statement``), from one snapshot:
    /// what `ledger statement` prints and the CLI's `--key` signs.
    /// - throws: `unknown_action`; `invalid_input` for a command no device signs or an empty store.
    public func statement(for command: Command, commandId: String, claimedAt: Timestamp,
                          contentHash: Digest? = nil) throws -> Statement.Tap {
        if let (field, problem) = command.identifierProblem {
            throw LedgerError(.invalidInput, "\(field) \(problem)", details: ["field": .string(field)])
        }
        if let problem = Identifier.problem(commandId) {
            throw LedgerError(.invalidInput, "command id \(problem)", details: ["field": "command_id"])
        }
        return try read { reader in
            guard let id = command.actionId, let s = try reader.actionState(id) else {
                throw LedgerError(.unknownAction, "no action \(command.actionId ?? "")",
                                  details: ["action_id": .string(command.actionId ?? "")])
            }
            guard let storeId = try reader.storeId(),
                  let t = CommandStatement.statement(command, commandId: commandId, claimedAt: claimedAt, content: contentHash,
                                              action: s, storeId: storeId) else {
                throw LedgerError(.invalidInput, "this command has no statement to sign")
            }
            return t
        }
    }
}
