extension DecisionReplay {
    /// The rule an event claims, for naming a mismatch.
    static func claimedRule(_ event: Event) -> String {
        switch event.payload {
        case .approved(let a): a.rule
        case .autoShipped(let a): a.rule
        case .dismissed: Policy.Rule.dismiss
        case .reviewed, .confirmed: "tap.\(event.type == .actionReviewed ? "review" : "confirm")"
        case .held: "action.hold"
        case .edited: "action.edit"
        case .executed, .failed: "action.outcome"
        case .expired: "action.expire"
        default: event.type.name
        }
    }

    /// The action folded from its stream in the log's index, events before `seq` only;
    /// every entry must name an event of this action (else `corrupt_event`).
    static func stream(_ id: String, before seq: UInt64, _ reader: LogReader) throws -> ActionState? {
        var state: ActionState?
        for stored in try reader.actionEvents(id) where stored.event.seq < seq {
            if case .proposed(let p) = stored.event.payload {
                state = ActionState(proposed: stored.event, proposal: p)
            } else {
                state?.apply(stored.event)
            }
        }
        return state
    }
}

extension Ledger {
    /// Replays every decision of the log (`ledger audit replay`) in one read snapshot:
    /// events before `from` are folded without judgement, the rest judged. Stops at the
    /// first mismatch, which the report names.
    /// - Parameter progress: called every 65,536 events with (seq, head seq).
    public func replayDecisions(from: UInt64 = 1, progress: ((UInt64, UInt64) -> Void)? = nil) throws -> DecisionReplay.Report {
        try read { reader in try DecisionReplay.run(reader, from: from, progress: progress) }
    }
}

extension DecisionReplay {
    /// Streams the log of `reader` from seq 1; judges from `from` on.
    static func run(_ reader: LogReader, from: UInt64 = 1, progress: ((UInt64, UInt64) -> Void)? = nil) throws -> Report {
        var replay = DecisionReplay()
        let head = try reader.head().seq
        do {
            try reader.forEach { stored in
                if stored.event.seq < from {
                    try replay.fold(stored.event, reader: reader)
                } else {
                    try replay.judge(stored.event, reader: reader)
                }
                if stored.event.seq & 0xFFFF == 0 { progress?(stored.event.seq, head) }
                return true
            }
            try replay.finish()
        } catch let m as Mismatch {
            replay.report.mismatch = m
        }
        return replay.report
    }
}
