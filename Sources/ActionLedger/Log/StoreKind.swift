extension Ledger {
    /// Makes this empty store a store of the given kind by appending `store.created` as its
    /// first event (`ledger init`, `ledger demo`).
    /// - throws: `not_empty` when the store already holds events.
    public func create(_ creation: StoreCreation, now: Timestamp, actor: String = "operator",
                       commandId: String = CommandRequest.newCommandId()) throws {
        try perform { session in
            guard session.head.seq == 0 else {
                throw LedgerError(.notEmpty, "the store already holds \(session.head.seq) events; "
                    + "only an empty store can be created", details: ["events": .number(Double(session.head.seq))])
            }
            _ = try TimeRules.check(now, head: nil)
            let event = try session.append(Event(at: now, actor: actor, commandId: commandId, org: StoreCreation.org,
                                                 person: actor, payload: .storeCreated(creation)))
            try session.recordCommand(commandId, first: event.event.seq, count: 1)
        }
    }

    /// What `store.created` says of this store; nil for a store without it (a production
    /// store made by the library or an older build: no test clock, not a demo).
    public func creation() throws -> StoreCreation? {
        try read { reader in
            guard case .storeCreated(let c)? = try reader.event(1)?.event.payload else { return nil }
            return c
        }
    }
}

extension StoreCreation {
    /// The org recorded on store-wide events (`store.created`).
    public static let org = "store"
}
