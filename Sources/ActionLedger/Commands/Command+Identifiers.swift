extension Command {
    /// The first of the command's identifiers (action, device, person, org) that is not
    /// one (Specs/events.md, "Identifiers"): the option or field it came from and why.
    ///
    /// The CLI checks this before it opens a store, and a statement is never rendered for a
    /// command that fails it: a statement is one value per line, and an id with a line break
    /// in it would re-cut those lines (Specs/statements.md §2).
    public var identifierProblem: (field: String, problem: String)? {
        var named: [(String, String)] = []
        if let id = actionId { named.append(("action_id", id)) }
        switch self {
        case .tap(_, _, let device, _, _), .dismiss(_, let device, _), .edit(_, let device, _), .hold(_, let device, _),
             .rotateDeviceKey(let device, _):
            named.append(("device", device))
        case .revokeDevice(let device, _, let by, _):
            named.append(("device", device))
            if let by { named.append(("by", by)) }
        case .linkDevice(let device, let person, let org, _, _), .linkKeyedDevice(let device, let person, let org, _, _, _, _):
            named += [("device", device), ("person", person)]
            if !org.isEmpty { named.append(("org", org)) }  // empty: the person's org, found by the engine
        case .setRecoveryKey(let person, _, _):
            named.append(("person", person))
        case .setPolicy(_, let org):
            named.append(("org", org))
        case .propose(let p):
            named += [("org", p.org), ("person", p.person)]
        case .recordOutcome, .expire, .setRelyingParty:
            break
        }
        for (field, value) in named {
            if let problem = Identifier.problem(value) { return (field, problem) }
        }
        return nil
    }
}
