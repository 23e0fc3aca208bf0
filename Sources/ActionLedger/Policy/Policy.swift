/// The stakes policy: pure functions of state, a policy document and a given `now`.
/// No I/O, no clock reads — the engine passes everything in. Specs/policy.md is this
/// file as a table; the rule ids below appear in both and in every decision event.
public enum Policy {
    /// Rule ids recorded in decisions.
    public enum Rule {
        public static let lowOneTap = "low.one_tap"
        public static let mediumTwoTaps = "medium.two_taps"
        public static let highThreeTaps = "high.three_taps"
        public static let autoShip = "auto_ship.low_confident"
        public static let dismiss = "dismiss"

        static func path(_ s: Stakes) -> String {
            switch s {
            case .low: lowOneTap
            case .medium: mediumTwoTaps
            case .high: highThreeTaps
            }
        }
    }

    /// The taps an action at `stakes` needs, in order.
    public static func tapPath(for stakes: Stakes) -> [TapStep] {
        switch stakes {
        case .low: [.approve]
        case .medium: [.review, .approve]
        case .high: [.review, .confirm, .approve]
        }
    }

    /// The proposer's stakes raised by every matching rule of `policy`; never lowered.
    public static func effectiveStakes(of proposal: Proposal, under policy: PolicyDocument) -> Stakes {
        policy.raise.reduce(proposal.stakes) { current, rule in
            rule.matches(kind: proposal.kind, surface: proposal.surface) ? max(current, rule.stakes) : current
        }
    }

    /// The tap the action needs next, or nil when it is decided.
    public static func nextTap(_ state: ActionState, under policy: PolicyDocument) -> TapStep? {
        guard state.status == .pending else { return nil }
        let path = tapPath(for: effectiveStakes(of: state.proposal, under: policy))
        let done = progress(state.taps, along: path)
        return done < path.count ? path[done] : .approve
    }

    /// How many steps of `path` the counted taps have made, matching them in order. A tap
    /// of a step the path does not have is passed over: it was counted under an earlier
    /// policy version that put the action at other stakes.
    public static func progress(_ taps: [ActionState.TapRecord], along path: [TapStep]) -> Int {
        var done = 0
        for tap in taps where done < path.count && tap.step == path[done] { done += 1 }
        return done
    }

    /// The outcome of judging a tap.
    public enum TapVerdict: Equatable, Sendable {
        /// Count it; for `approve`, the rule that fired and the effective stakes.
        case accept(rule: String, stakes: Stakes)
        /// Already counted on this content: record nothing.
        case duplicate
    }

    /// A person's tap (`review`, `confirm`, `approve`) from `device`.
    ///
    /// - Parameters:
    ///   - seenContent: the content hash the client showed, when it says; a mismatch is
    ///     `stale_content` (the creator approves exactly what ships).
    /// - throws: ``LedgerError`` naming exactly what is missing or wrong.
    public static func judgeTap(_ step: TapStep, on state: ActionState, device: DeviceState?, deviceId: String,
                                seenContent: Digest?, userVerified: Bool, policy: PolicyDocument,
                                now: Timestamp) throws -> TapVerdict {
        try checkActionable(state, device: device, deviceId: deviceId, now: now)
        if let seenContent, seenContent != state.contentHash {
            throw LedgerError(.staleContent, "action \(state.actionId) was edited: the tap was made on content "
                + "\(seenContent.hex.prefix(12)), the current content is \(state.contentHash.hex.prefix(12))",
                details: ["current_content_hash": .string(state.contentHash.hex)])
        }
        let stakes = effectiveStakes(of: state.proposal, under: policy)
        let path = tapPath(for: stakes)
        let done = progress(state.taps, along: path)
        guard let position = path.firstIndex(of: step) else {
            throw tapsRequired(state, path[done], "\(stakes.rawValue)-stakes actions take no \(step.rawValue) tap")
        }
        if position < done { return .duplicate }
        if position > done { throw tapsRequired(state, path[done], "\(step.rawValue) needs \(path[done].rawValue) first") }
        if step == .approve, policy.userVerification.contains(stakes), !userVerified {
            throw LedgerError(.userVerificationRequired,
                              "approving \(stakes.rawValue)-stakes action \(state.actionId) needs user verification "
                                + "(biometric attestation; --user-verified on the CLI)",
                              details: ["next_tap": "approve"])
        }
        return .accept(rule: Rule.path(stakes), stakes: stakes)
    }

    /// Checks a dismissal, hold or edit: the same device and decision rules as a tap.
    public static func judgeChange(on state: ActionState, device: DeviceState?, deviceId: String, now: Timestamp) throws {
        try checkActionable(state, device: device, deviceId: deviceId, now: now)
    }

    /// Whether a new proposal ships by itself, and by which rule; nil means it waits.
    public static func autoShipRule(for proposal: Proposal, policy: PolicyDocument, autoShippedToday: Int) -> String? {
        let settings = policy.autoShip
        guard settings.enabled, effectiveStakes(of: proposal, under: policy) == .low,
              proposal.confidence >= settings.confidenceFloor, autoShippedToday < settings.dailyCap else { return nil }
        return Rule.autoShip
    }

    /// Refuses when the device may not act for this action's person, or the action is
    /// decided or expired. The order of checks is the order a person would fix them.
    static func checkActionable(_ state: ActionState, device: DeviceState?, deviceId: String, now: Timestamp) throws {
        guard let device else {
            throw LedgerError(.unknownDevice, "device \(deviceId) is not linked", details: ["device": .string(deviceId)])
        }
        if let revoked = device.revokedAt {
            throw LedgerError(.deviceRevoked, "device \(deviceId) (\(device.label)) was revoked at \(revoked.iso8601)",
                              details: ["device": .string(deviceId), "revoked_at": .string(revoked.iso8601)])
        }
        guard device.person == state.person else {
            throw LedgerError(.deviceNotOwned, "device \(deviceId) belongs to \(device.person), "
                + "not to \(state.person) whose action \(state.actionId) this is", details: ["device": .string(deviceId)])
        }
        if let d = state.decision {
            throw alreadyDecided(state, d)
        }
        if state.status == .expired || (state.proposal.expiresAt.map { $0 <= now } ?? false) {
            throw LedgerError(.actionExpired, "action \(state.actionId) expired at "
                + "\((state.proposal.expiresAt ?? now).iso8601)")
        }
    }

    static func alreadyDecided(_ state: ActionState, _ d: ActionState.DecisionRecord) -> LedgerError {
        let verb = d.type.name.replacingOccurrences(of: "action.", with: "").replacingOccurrences(of: "_", with: "-")
        let from = d.device.map { " from device \($0)" } ?? ""
        return LedgerError(.alreadyDecided, "action \(state.actionId) was already \(verb) by \(d.actor)\(from) at \(d.at.iso8601)",
                           details: ["decided_by": .string(d.actor), "decided_device": d.device.map(JSON.string) ?? .null,
                                     "decided_at": .string(d.at.iso8601), "decision": .string(d.type.name),
                                     "decided_seq": .number(Double(d.seq))])
    }

    static func tapsRequired(_ state: ActionState, _ next: TapStep, _ why: String) -> LedgerError {
        LedgerError(.tapsRequired, "action \(state.actionId): \(why); next tap: \(next.rawValue)",
                    details: ["next_tap": .string(next.rawValue)])
    }
}
