/// What an action's later events are described by: its proposal's seq, specialist,
/// surface, kind and expiry. Read from the log (the action's first event) when a fold or a
/// query needs it, so no projection keeps a copy of the proposal.
public struct ActionInfo: Sendable, Equatable {
    public var seq: UInt64
    public var specialist: Specialist
    public var surface: String
    public var kind: String
    public var expiresAt: Timestamp?

    init(seq: UInt64, _ p: Proposal) {
        self.seq = seq
        specialist = p.specialist
        surface = p.surface
        kind = p.kind
        expiresAt = p.expiresAt
    }
}

extension LogReader {
    /// The seq of `actionId`'s proposal (its first event); nil when never proposed.
    func proposalSeq(of actionId: String) throws -> UInt64? {
        let prefix = Keys.prefix(actionId)
        var first: UInt64?
        try dbs.actionSeqs.scan(txn, from: prefix) { k, _ in
            guard k.starts(with: prefix) else { return false }
            guard k.count == prefix.count + 8 else {
                throw LedgerError(.corruptEvent, "\(dbs.actionSeqs.name) entry of \(actionId) has a \(k.count - prefix.count)-byte seq, not 8")
            }
            first = Keys.readU64(k, at: prefix.count)
            return false
        }
        return first
    }

    /// `actionId`'s proposal as its later events are described.
    /// - throws: `projection_stale` when the action was never proposed (an event of an
    ///   unknown action cannot be described), `corrupt_event` when its first event is not a proposal.
    func actionInfo(_ actionId: String) throws -> ActionInfo {
        guard let seq = try proposalSeq(of: actionId), let stored = try event(seq) else {
            throw LedgerError(.projectionStale, "an event of action \(actionId), which was never proposed")
        }
        guard case .proposed(let p) = stored.event.payload, stored.event.actionId == actionId else {
            throw LedgerError(.corruptEvent, "the first event of action \(actionId) (seq \(seq)) is not its proposal")
        }
        return ActionInfo(seq: seq, p)
    }
}

extension ProjectionStore {
    /// Folds keep at most this many actions described in memory; past it the cache is
    /// emptied (a fold's events mostly concern recent actions, so it refills cheaply).
    static let actionInfoLimit = 4096

    /// `actionId`'s description for a fold: from this fold's cache, else from the log.
    func describe(_ actionId: String) throws -> ActionInfo {
        if let known = actionInfo[actionId] { return known }
        guard let log else { preconditionFailure("\(name) folds need the log") }
        let info = try log.actionInfo(actionId)
        remember(actionId, info)
        return info
    }

    /// Caches a proposal just folded (its later events follow soon).
    func remember(_ actionId: String, _ info: ActionInfo) {
        if actionInfo.count >= Self.actionInfoLimit { actionInfo.removeAll(keepingCapacity: true) }
        actionInfo[actionId] = info
    }
}
