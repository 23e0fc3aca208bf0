/// Re-judges recorded events with the pure ``Policy``, in log order, under the policy
/// document and device state in force at each seq: every tap, decision, change, device
/// and policy event must be one the engine could have appended (Specs/integrity.md,
/// "Decision replay"). `ledger audit replay` and `ledger import` run this same code.
///
/// Memory stays bounded by what is live, not by the log: devices, the policy, the current
/// UTC day's auto-ship counts and the actions still pending. A decided action leaves
/// memory; a later event of it (an outcome, or a forged second decision) folds its stream
/// back from the log's action index, checking every entry against the event it names.
public struct DecisionReplay {
    /// The first event the policy would not have produced.
    public struct Mismatch: Error, Sendable, Equatable {
        public var seq: UInt64
        /// The rule the event claims, or the check it failed (Specs/integrity.md lists them).
        public var rule: String
        /// The refusal the engine would have given, when it would have refused.
        public var code: String?
        public var message: String
        /// The org of the event (set by the run), so an org's auditor is told of another
        /// org's mismatch without its details.
        public var org: String?
    }

    /// What a replay confirmed.
    public struct Report: Sendable, Equatable {
        public var eventsJudged: UInt64 = 0
        public var decisionsConfirmed: UInt64 = 0
        /// Confirmed decisions by rule id.
        public var byRule: [String: UInt64] = [:]
        public var lastSeq: UInt64 = 0
        public var mismatch: Mismatch?
        /// Each org's events judged, decisions confirmed and their rules.
        public var byOrg: [String: OrgCounts] = [:]

        public struct OrgCounts: Sendable, Equatable {
            public var eventsJudged: UInt64 = 0
            public var decisionsConfirmed: UInt64 = 0
            public var byRule: [String: UInt64] = [:]
        }
    }

    public internal(set) var report = Report()
    /// The policy judging the current event: the latest of any org under rules version 1,
    /// the event's org's under rules version 2 (policy.md `policy.org`).
    var policy = PolicyDocument.builtIn
    var latest = PolicyDocument.builtIn
    var policies: [String: PolicyDocument] = [:]
    /// The store's id (seq 1's hash), read once: every signed statement binds it.
    var storeId: Digest??
    /// The WebAuthn relying party in force (`store.relying_party`).
    var rp: RelyingParty?
    /// Each WebAuthn key's last accepted non-zero signature counter.
    var signCounts = SignCounts()
    /// The org each person is bound to (policy.md `person.one_org`).
    var personOrgs: [String: String] = [:]
    /// Every linked device as it stands at the current seq (DecisionReplay+Devices).
    var devices: [String: DeviceState] = [:]
    /// Each person's recovery key in force (DecisionReplay+Devices).
    var recoveryKeys: [String: RecoveryKeys.InForce] = [:]
    var live: [String: ActionState] = [:]
    var day: Int64 = .min
    var autoShipsToday: [String: Int] = [:]
    var previous: Event?
    /// Set by a proposal the policy ships at once: the next event must be its auto-ship.
    var expectedAutoShip: (actionId: String, commandId: String, rule: String, org: String)?
    /// Command ids of recorded refusals → their seq: no later event may reuse one.
    var refusedCommands: [String: UInt64] = [:]
    /// Each issued token's org, and nil once revoked: a revocation is its token's org's, once.
    var tokenOrgs: [String: String?] = [:]
    /// Each device's recorded refusals in the minute of its latest: the engine records at
    /// most ``RefusalRecorder/perMinute`` (policy.md §7).
    var refusalMinutes: [String: (minute: Int64, count: UInt32)] = [:]

    public init() {}

    /// Folds `event` into the replay's state without judging it (the prefix before `--from`).
    public mutating func fold(_ event: Event, reader: LogReader) throws {
        _ = try apply(event, reader: reader, judge: false)
    }

    /// Judges `event`; returns the decision rule it confirmed, if it was a decision.
    /// - throws: ``Mismatch`` naming the seq and rule; storage or corrupt-event errors.
    @discardableResult
    public mutating func judge(_ event: Event, reader: LogReader) throws -> String? {
        let rule: String?
        do {
            rule = try apply(event, reader: reader, judge: true)
        } catch var m as Mismatch {
            if m.org == nil { m.org = event.org }
            throw m
        }
        report.eventsJudged += 1
        report.byOrg[event.org, default: Report.OrgCounts()].eventsJudged += 1
        if let rule {
            report.decisionsConfirmed += 1
            report.byRule[rule, default: 0] += 1
            report.byOrg[event.org, default: Report.OrgCounts()].decisionsConfirmed += 1
            report.byOrg[event.org, default: Report.OrgCounts()].byRule[rule, default: 0] += 1
        }
        return rule
    }

    /// Call after the last event: a proposal the policy would have shipped must have been.
    public func finish() throws {
        if let e = expectedAutoShip {
            throw Mismatch(seq: report.lastSeq, rule: e.rule, code: nil,
                           message: "action \(e.actionId) was proposed under a policy that ships it at once, "
                               + "but the log ends without its action.auto_shipped", org: e.org)
        }
    }

    private mutating func apply(_ event: Event, reader: LogReader, judge: Bool) throws -> String? {
        defer {
            previous = event
            report.lastSeq = event.seq
        }
        func fail(_ rule: String, _ message: String, _ code: LedgerError.Code? = nil) -> Mismatch {
            Mismatch(seq: event.seq, rule: rule, code: code?.rawValue, message: "seq \(event.seq) (\(event.type.name)): \(message)")
        }
        if let e = expectedAutoShip, judge {
            guard case .autoShipped = event.payload, event.actionId == e.actionId, event.commandId == e.commandId else {
                var m = fail(e.rule, "the proposal of \(e.actionId) just before it met \(e.rule) under policy "
                    + "v\(policy.version): the engine would have auto-shipped it in the same command")
                m.org = e.org  // the proposal's org, not the next event's
                throw m
            }
        }
        if judge {
            if let p = previous {
                if event.at < p.at { throw fail("time.monotonic", "recorded at \(event.at.iso8601), before seq \(p.seq)") }
                // Two events share a command: a proposal and its auto-ship, a first keyed link and her recovery key.
                if event.commandId == p.commandId, !(event.type == .actionAutoShipped && p.type == .actionProposed),
                   !(event.type == .personRecoveryKeySet && p.type == .deviceLinked),
                   event.type != .tapRefused, p.type != .tapRefused {
                    throw fail("command.unique", "command id \(event.commandId) already produced seq \(p.seq)")
                }
                // A command's events are written at one time (events.md, envelope `at`): an
                // auto-ship dated after its proposal would move it in the 24-hour audit.
                if event.commandId == p.commandId, event.at != p.at {
                    throw fail("command.unique", "recorded at \(event.at.iso8601), but seq \(p.seq) of the same command "
                        + "at \(p.at.iso8601): a command's events share their time")
                }
            }
            let range = try reader.command(event.commandId)
            let covered = range.map { $0.first <= event.seq && event.seq < $0.first + UInt64($0.count) } ?? false
            if event.type == .tapRefused {
                // A recorded refusal registers its command id (policy.md §7). A store written
                // before that rule has it unregistered, or given to a later command (which the
                // check below reports).
                if let r = range, !covered, r.first < event.seq {
                    throw fail("command.unique", "the commands index gives refused command \(event.commandId) seq \(r.first)")
                }
                refusedCommands[event.commandId] = event.seq
            } else {
                guard covered else { throw fail("command.unique", "the commands index does not give command \(event.commandId) this seq") }
                if let refused = refusedCommands[event.commandId] {
                    throw fail("refusal.replayed", "command id \(event.commandId) was refused and recorded at seq \(refused): "
                        + "its proof is spent, and this event reuses it")
                }
            }
        }
        let day = event.at.utcDay
        if day != self.day {
            self.day = day
            autoShipsToday = [:]
        }
        switch event.payload {
        case .storeCreated:
            if judge, event.seq != 1 { throw fail("store.created", "store.created is only ever the first event") }
            // As `ledger init` writes it: the store's own org, the operator as actor and person, no device.
            if judge, event.org != StoreCreation.org || event.person != event.actor || event.device != nil {
                throw fail("store.created", "store.created names org \(event.org), person \(event.person), actor \(event.actor)"
                    + (event.device.map { ", device \($0)" } ?? "") + "; init records org store, the operator as both, no device")
            }
            return nil
        case .relyingParty(let r):
            if judge { try requireOperatorEnvelope(event, org: StoreCreation.org, fail) }
            rp = r
            return nil
        case .tokenIssued(let t):
            // Who may call `ledger serve`: no decision rests on it, but who did it is the operator's.
            if judge { try requireOperatorEnvelope(event, org: nil, fail) }
            tokenOrgs[t.tokenId] = .some(event.org)
            return nil
        case .tokenRevoked(let r):
            // Recorded under its token's org (`tokens revoke` writes it so): another org's would
            // list it in that org's audit. A token never issued, or revoked already, the engine refuses.
            if judge {
                guard case .some(.some(let org)) = tokenOrgs[r.tokenId] else {
                    throw fail("operator.envelope", "a revocation of token \(r.tokenId), which was never issued or is revoked already")
                }
                try requireOperatorEnvelope(event, org: org, fail)
            }
            tokenOrgs[r.tokenId] = .some(nil)
            return nil
        case .policySet(let p):
            if judge { try requireOperatorEnvelope(event, org: nil, fail) }
            // Versions run per org (rules 2); a store written before ran them across orgs.
            let own = policies[event.org]?.version ?? 0
            // Wide: a damaged record's version can be the type's largest (no trap on +1).
            if judge, UInt64(p.version) != UInt64(own) + 1, UInt64(p.version) != UInt64(latest.version) + 1 {
                throw fail("policy.version", "policy v\(p.version) of \(event.org) does not follow v\(own)", .invalidInput)
            }
            latest = p
            policies[event.org] = p
            return nil
        case .deviceLinked, .deviceRevoked, .deviceKeyRotated, .recoveryKeySet:
            try applyDevice(event, reader: reader, judge: judge, fail)
            return nil
        default:
            return try applyAction(event, reader: reader, judge: judge, fail)
        }
    }

    /// An operator's event (a policy, a token, the relying party) as the engine writes it:
    /// the operator as both actor and person, no device, and `org` where one is fixed (the
    /// relying party is the store's). A device named there would put the event in that
    /// device's audit; a person, in hers.
    func requireOperatorEnvelope(_ event: Event, org: String?, _ fail: (String, String, LedgerError.Code?) -> Mismatch) throws {
        guard event.person == event.actor, event.device == nil, org.map({ $0 == event.org }) ?? true else {
            throw fail("operator.envelope", "a \(event.type.name) by \(event.actor) names person \(event.person)"
                + (event.device.map { ", device \($0)" } ?? "") + (org.map { $0 == event.org ? "" : ", org \(event.org)" } ?? "")
                + "; the engine records the operator as both\(org.map { ", org \($0)" } ?? ""), with no device", nil)
        }
    }
}
