/// The stakes policy: pure functions of state, a policy document and a given `now`.
/// No I/O, no clock reads — the engine passes everything in. Specs/policy.md is this
/// file as a table; the rule ids below appear in both and in every decision event.
public enum Policy {
    /// The rules version this build judges new commands under, recorded in every proposal
    /// and decision. Version 1: stakes and user verification follow the policy in force at
    /// each tap; orgs are labels. Version 2: an action keeps at least the stakes and user
    /// verification it was proposed under (a newer policy may tighten, never loosen them),
    /// and a device acts only on actions of its own org (others' are not disclosed).
    /// Replay judges each event under the version it recorded (Specs/policy.md).
    public static let rulesVersion: UInt32 = 2

    /// What an action requires now: its effective stakes and whether approving needs user
    /// verification, under `policy` and the rules version that judges it.
    public static func requirements(of proposal: Proposal, under policy: PolicyDocument,
                                    rules: UInt32 = rulesVersion) -> (stakes: Stakes, userVerification: Bool) {
        var stakes = effectiveStakes(of: proposal, under: policy)
        if rules >= 2, let pin = proposal.pinned { stakes = max(stakes, pin.stakes) }
        let uv = policy.userVerification.contains(stakes) || (rules >= 2 && proposal.pinned?.userVerification == true)
        return (stakes, uv)
    }

    /// The requirements to pin in a proposal recorded now (rules version 2).
    public static func pin(_ proposal: Proposal, under policy: PolicyDocument) -> PinnedRequirements {
        let stakes = effectiveStakes(of: proposal, under: policy)
        return PinnedRequirements(rulesVersion: rulesVersion, stakes: stakes,
                                  userVerification: policy.userVerification.contains(stakes))
    }

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
        effectiveStakes(proposal.stakes, kind: proposal.kind, surface: proposal.surface, under: policy)
    }

    /// ``effectiveStakes(of:under:)`` from the three facts it reads (a fold that reads a
    /// proposal in place has no `Proposal`).
    public static func effectiveStakes(_ stakes: Stakes, kind: String, surface: String, under policy: PolicyDocument) -> Stakes {
        policy.raise.reduce(stakes) { current, rule in
            rule.matches(kind: kind, surface: surface) ? max(current, rule.stakes) : current
        }
    }

    /// The tap the action needs next at `now`: none once it has expired, recorded or not (the
    /// engine refuses every tap then: `action_expired`).
    public static func nextTap(_ state: ActionState, under policy: PolicyDocument, now: Timestamp) -> TapStep? {
        state.isExpired(at: now) ? nil : nextTap(state, under: policy)
    }

    /// The tap the action needs next, or nil when it is decided (its expiry aside: the
    /// engine's judgement checks that against its own clock).
    public static func nextTap(_ state: ActionState, under policy: PolicyDocument) -> TapStep? {
        guard state.status == .pending else { return nil }
        let path = tapPath(for: requirements(of: state.proposal, under: policy).stakes)
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
    ///   - rules: the rules version judging it (replay passes the one the event recorded).
    ///   - proof: the level the tap is proven at (``ProofLevel/of(_:userVerified:)``),
    ///     checked against the policy's `proofs` once the step is next (`proof.required`).
    public static func judgeTap(_ step: TapStep, on state: ActionState, device: DeviceState?, deviceId: String,
                                seenContent: Digest?, userVerified: Bool, proof: ProofLevel, policy: PolicyDocument,
                                now: Timestamp, rules: UInt32 = rulesVersion) throws -> TapVerdict {
        try checkActionable(state, device: device, deviceId: deviceId, now: now, rules: rules)
        if let seenContent, seenContent != state.contentHash {
            throw LedgerError(.staleContent, "action \(state.actionId)'s content is not what the tap was made on: "
                + "\(seenContent.hex.prefix(12)), the current content is \(state.contentHash.hex.prefix(12))",
                details: ["current_content_hash": .string(state.contentHash.hex)])
        }
        let (stakes, uvRequired) = requirements(of: state.proposal, under: policy, rules: rules)
        let path = tapPath(for: stakes)
        let done = progress(state.taps, along: path)
        guard let position = path.firstIndex(of: step) else {
            throw tapsRequired(state, path[done], "\(stakes.rawValue)-stakes actions take no \(step.rawValue) tap")
        }
        if position < done { return .duplicate }
        if position > done { throw tapsRequired(state, path[done], "\(step.rawValue) needs \(path[done].rawValue) first") }
        try requireProof(Statement.Step(step), at: stakes, level: proof, on: state, policy: policy, deviceId: deviceId)
        if step == .approve, uvRequired, !userVerified {
            throw LedgerError(.userVerificationRequired,
                              "approving \(stakes.rawValue)-stakes action \(state.actionId) needs user verification "
                                + "(biometric attestation; --user-verified on the CLI)",
                              details: ["next_tap": "approve"])
        }
        return .accept(rule: Rule.path(stakes), stakes: stakes)
    }

    /// Checks a dismissal, hold or edit (`step`): the same device and decision rules as a
    /// tap, then the proof the policy requires of it at the action's effective stakes.
    public static func judgeChange(_ step: Statement.Step, on state: ActionState, device: DeviceState?, deviceId: String,
                                   proof: ProofLevel, policy: PolicyDocument, now: Timestamp,
                                   rules: UInt32 = rulesVersion) throws {
        try checkActionable(state, device: device, deviceId: deviceId, now: now, rules: rules)
        let stakes = requirements(of: state.proposal, under: policy, rules: rules).stakes
        try requireProof(step, at: stakes, level: proof, on: state, policy: policy, deviceId: deviceId)
    }

    /// Whether a new proposal ships by itself, and by which rule; nil means it waits.
    public static func autoShipRule(for proposal: Proposal, policy: PolicyDocument, autoShippedToday: Int) -> String? {
        let settings = policy.autoShip
        guard settings.enabled, requirements(of: proposal, under: policy).stakes == .low,
              proposal.confidence >= settings.confidenceFloor, autoShippedToday < settings.dailyCap else { return nil }
        return Rule.autoShip
    }

    /// Refuses when the device may not act for this action's person, or the action is
    /// decided or expired. The order of checks is the order a person would fix them.
    static func checkActionable(_ state: ActionState, device: DeviceState?, deviceId: String, now: Timestamp,
                                rules: UInt32 = rulesVersion) throws {
        guard let device else {
            throw LedgerError(.unknownDevice, "device \(deviceId) is not linked", details: ["device": .string(deviceId)])
        }
        // Rules 2: another org's device learns nothing of this action, not even that it exists.
        if rules >= 2, device.org != state.org {
            throw LedgerError(.unknownAction, "no action \(state.actionId)", details: ["action_id": .string(state.actionId)])
        }
        if let revoked = device.revokedAt {
            throw LedgerError(.deviceRevoked, "device \(deviceId) (\(device.label)) was revoked at \(revoked.iso8601)",
                              details: ["device": .string(deviceId), "revoked_at": .string(revoked.iso8601)])
        }
        guard device.person == state.person else {
            // The refusal names the device's person, never the action's: a device that may not
            // read another person's action learns nothing of it (`ledger show` tells an operator).
            throw LedgerError(.deviceNotOwned, "device \(deviceId) belongs to \(device.person); action \(state.actionId) "
                + "is another person's", details: ["device": .string(deviceId)])
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
