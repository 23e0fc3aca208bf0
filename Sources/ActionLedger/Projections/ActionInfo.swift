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

/// What a fold files an action's later events under: its proposal's specialist name and surface.
struct Filing {
    var specialist: String
    var surface: String
}

/// Filings the writer learned from the actions its commands judged, for the folds after
/// them (``ProjectionStore/filing(_:)`` looks here before reading the proposal back from
/// the log, a cursor seek and a read per event). A filing is fixed by the action's one
/// proposal, so one learned from a proposal committed before the transaction that read it
/// stays true whatever becomes of that transaction — even if another process appends.
struct KnownFilings {
    private(set) var byId: [IdKey: Filing] = [:]

    /// Learns `s`'s filing; the caller guarantees its proposal was committed before the
    /// transaction that read `s` began. Bounded like a fold's own cache.
    mutating func learn(_ s: ActionState) {
        if byId.count >= ProjectionStore.filingLimit { byId.removeAll(keepingCapacity: true) }
        byId[IdKey(s.actionId)] = Filing(specialist: s.proposal.specialist.name, surface: s.proposal.surface)
    }

    /// Whether `actionId`'s filing is known.
    func knows(_ actionId: String) -> Bool { byId[IdKey(actionId)] != nil }
}

extension LogReader {
    /// `actionId`'s filing, read from its proposal in place (no decode).
    func filing(_ actionId: String) throws -> Filing {
        guard let seq = try proposalSeq(of: actionId) else {
            throw LedgerError(.projectionStale, "an event of action \(actionId), which was never proposed")
        }
        let filing = try withRawEvent(seq) { v -> Filing in
            let view = try EventView(stored: v)
            let f = try view.proposalFiling()
            return Filing(specialist: view.string(f.specialist), surface: view.string(f.surface))
        }
        guard let filing else { throw LedgerError(.corruptEvent, "action_seqs names seq \(seq), which the log does not hold") }
        return filing
    }
}

extension ProjectionStore {
    /// Folds keep at most this many actions' filings in memory; past it the cache is
    /// emptied (a fold's events mostly concern recent actions, so it refills cheaply).
    static let filingLimit = 4096

    /// `actionId`'s filing for a fold: from this fold's cache, else from the log.
    func filing(_ actionId: String) throws -> Filing {
        var id = actionId
        return try id.withUTF8 { try filing(UnsafeRawBufferPointer($0)) }
    }

    /// The filing of the action whose id is `bytes` (an event's field read in place).
    func filing(_ bytes: UnsafeRawBufferPointer) throws -> Filing {
        let key = IdKey(bytes)
        if let known = filings[key] ?? knownFilings[key] { return known }
        guard let log else { preconditionFailure("\(name) folds need the log") }
        let filing = try log.filing(String(decoding: bytes, as: UTF8.self))
        remember(key, filing)
        return filing
    }

    /// Caches a proposal just folded (its later events follow soon).
    func remember(_ actionId: String, _ filing: Filing) {
        remember(IdKey(actionId), filing)
    }

    func remember(_ key: IdKey, _ filing: Filing) {
        if filings.count >= Self.filingLimit { filings.removeAll(keepingCapacity: true) }
        filings[key] = filing
    }
}
