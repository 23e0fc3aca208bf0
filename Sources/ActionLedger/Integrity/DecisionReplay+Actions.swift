/// The judging of action events: proposals, taps, decisions, changes, refusals and
/// outcomes, each under the rules version and policy it recorded (Specs/integrity.md,
/// "Decision replay"). Split from DecisionReplay.swift to keep each file readable.
extension DecisionReplay {
    /// Counts a `tap.refused` against its device's minute (0 for other events): how many
    /// the device has recorded in that minute, this one included.
    mutating func countRefusal(_ event: Event) -> UInt32 {
        guard event.type == .tapRefused, let device = event.device else { return 0 }
        let minute = event.at.minute
        let count = refusalMinutes[device].map { $0.minute == minute ? $0.count + 1 : 1 } ?? 1
        refusalMinutes[device] = (minute, count)
        return count
    }

    mutating func applyAction(_ event: Event, reader: LogReader, judge: Bool,
                                      _ fail: (String, String, LedgerError.Code?) -> Mismatch) throws -> String? {
        guard let id = event.actionId else { throw fail("action.id", "an action event without an action id", .corruptEvent) }
        if case .proposed(let p) = event.payload {
            let rules = p.pinned?.rulesVersion ?? 1
            policy = rules >= 2 ? policies[event.org] ?? .builtIn : latest
            if judge, rules >= 2, let bound = personOrgs[event.person], bound != event.org {
                throw fail("person.one_org", "a proposal for \(event.person) under \(event.org); the person belongs to another org",
                           .orgMismatch)
            }
            if personOrgs[event.person] == nil { personOrgs[event.person] = event.org }
            if judge {
                if try live[id] != nil || reader.seqs(in: reader.dbs.actionSeqs, of: id).contains(where: { $0 < event.seq }) {
                    throw fail("action.propose", "action \(id) was already proposed", .duplicateAction)
                }
                if EventCodec.contentHash(of: p.preview) != p.contentHash {
                    throw fail("content_hash", "the content hash is not the preview's", .integrityFailure)
                }
                // Only "after its time": the 2000…2100 bound on the times a command gives is newer
                // than stores that recorded later ones, which stay replayable.
                if let expires = p.expiresAt, expires <= event.at {
                    throw fail("action.propose", "expires_at \(expires.iso8601) is not after the proposal's time", .invalidInput)
                }
                if event.actor != "specialist:\(p.specialist.name)" || event.device != nil {
                    throw fail("action.propose", "a proposal by \(event.actor)\(event.device.map { " on \($0)" } ?? ""); the engine "
                        + "records specialist:\(p.specialist.name), with no device", nil)
                }
                if let pin = p.pinned {
                    var bare = p
                    bare.pinned = nil
                    var expected = Policy.pin(bare, under: policy)
                    expected.rulesVersion = pin.rulesVersion
                    guard pin.rulesVersion <= Policy.rulesVersion, pin == expected else {
                        throw fail("stakes.pinned", "pinned \(pin.stakes.rawValue) stakes (user verification "
                            + "\(pin.userVerification)) under rules v\(pin.rulesVersion); policy v\(policy.version) gives "
                            + "\(expected.stakes.rawValue) (\(expected.userVerification))", nil)
                    }
                }
            }
            live[id] = ActionState(proposed: event, proposal: p)
            let rule = Policy.autoShipRule(for: p, policy: policy, autoShippedToday: autoShipsToday[event.person] ?? 0)
            expectedAutoShip = rule.map { (id, event.commandId, $0, event.org) }
            return nil
        }
        guard var state = try live[id] ?? Self.stream(id, before: event.seq, reader) else {
            throw fail("action.propose", "action \(id) was never proposed", .unknownAction)
        }
        let refusals = countRefusal(event)
        guard judge else {
            signCounts.fold(event)
            if case .autoShipped = event.payload {
                // As judging would: the proposal's expected auto-ship came, and counts for its day.
                if expectedAutoShip?.actionId == id { expectedAutoShip = nil }
                autoShipsToday[event.person, default: 0] += 1
            }
            state.apply(event)
            keep(state)
            return nil
        }
        if event.org != state.org || event.person != state.person {
            throw fail("action.person", "the event names \(event.person)/\(event.org), the action is \(state.person)/\(state.org)", nil)
        }
        let device = event.device.flatMap { devices[$0] }
        // Each event is judged under the rules version it recorded; holds, edits and
        // outcomes record none and take their action's (1 for actions proposed before).
        let proposedUnder = state.proposal.pinned?.rulesVersion ?? 1
        let rules = event.payload.rulesVersion ?? proposedUnder
        policy = rules >= 2 ? policies[state.org] ?? .builtIn : latest
        guard rules <= Policy.rulesVersion else {
            throw fail(Self.claimedRule(event), "rules version \(rules) is unknown to this build (it judges 1…\(Policy.rulesVersion))", nil)
        }
        // Rules versions only grow: no build judges an action under older rules than the
        // ones it was proposed under (a decision claiming rules version 1 on a proposal
        // pinned under 2 would escape the pinned stakes).
        guard rules >= proposedUnder else {
            throw fail(Self.claimedRule(event), "rules version \(rules) is older than the rules version \(proposedUnder) "
                + "action \(id) was proposed under", nil)
        }
        // Who the engine records for each event: her own changes and refusals are hers, an
        // expiry the policy's, and an outcome (reported by whoever ran the action) names no device.
        switch event.payload {
        case .dismissed, .held, .edited, .tapRefused:
            guard event.actor == state.person else {
                throw fail(Self.claimedRule(event), "a \(event.type.name) by \(event.actor), not by \(state.person)", nil)
            }
        case .expired:
            guard event.actor == Event.systemPolicyActor, event.device == nil else {
                throw fail("action.expire", "an expiry by \(event.actor)\(event.device.map { " on \($0)" } ?? ""); "
                    + "the engine records \(Event.systemPolicyActor), with no device", nil)
            }
        case .executed, .failed:
            guard event.device == nil else {
                throw fail("action.outcome", "an outcome names device \(event.device!); the engine records none", nil)
            }
        case .autoShipped(let a):
            // The policy's own decision: made on no device, so an audit of a device never lists it.
            guard event.device == nil else {
                throw fail(a.rule, "an auto-ship names device \(event.device!); the engine records none", nil)
            }
        default:
            break
        }
        var decided: String?
        // The level the event's own proof (or assertion) gives, judged against the proofs
        // its policy version required (policy.md `proof.required`).
        let level = event.payload.proofLevel ?? .none
        do {
            switch event.payload {
            case .autoShipped(let a):
                guard let e = expectedAutoShip, e.actionId == id else {
                    throw fail(a.rule, "the policy would not auto-ship \(id) here", nil)
                }
                expectedAutoShip = nil
                guard a.rule == e.rule, a.policyVersion == policy.version, a.contentHash == state.contentHash,
                      a.rulesVersion == state.proposal.pinned?.rulesVersion ?? 1,
                      a.confidence == state.proposal.confidence, event.actor == Event.systemPolicyActor else {
                    throw fail(a.rule, "the auto-ship does not record what the policy decided (rule \(e.rule), "
                        + "policy v\(policy.version))", nil)
                }
                autoShipsToday[event.person, default: 0] += 1
                decided = a.rule
            case .reviewed(let t), .confirmed(let t):
                let step: TapStep = event.type == .actionReviewed ? .review : .confirm
                try judgeTap(step, t.contentHash, t.policyVersion, userVerified: false, level, rules, state, device, event, fail)
            case .approved(let a):
                let (rule, stakes) = try judgeTap(.approve, a.contentHash, a.policyVersion, userVerified: a.userVerified,
                                                  level, rules, state, device, event, fail)
                guard a.rule == rule, a.stakes == stakes else {
                    throw fail(a.rule, "recorded as \(a.rule) at \(a.stakes.rawValue) stakes; the policy decides \(rule) "
                        + "at \(stakes.rawValue)", nil)
                }
                decided = rule
            case .dismissed(let d):
                try Policy.judgeChange(.dismiss, on: state, device: device, deviceId: event.device ?? "",
                                       proof: level, policy: policy, now: event.at, rules: rules)
                guard d.policyVersion == policy.version else {
                    throw fail(Policy.Rule.dismiss, "recorded under policy v\(d.policyVersion), v\(policy.version) was in force", nil)
                }
                decided = Policy.Rule.dismiss
            case .held(let h):
                try Policy.judgeChange(.hold, on: state, device: device, deviceId: event.device ?? "",
                                       proof: level, policy: policy, now: event.at, rules: rules)
                guard h.until > event.at else { throw fail("action.hold", "held until a time not after the hold", .invalidInput) }
            case .edited(let e):
                try Policy.judgeChange(.edit, on: state, device: device, deviceId: event.device ?? "",
                                       proof: level, policy: policy, now: event.at, rules: rules)
                guard EventCodec.contentHash(of: e.preview) == e.contentHash else {
                    throw fail("content_hash", "the content hash is not the edited preview's", .integrityFailure)
                }
                guard e.preview != state.proposal.preview else { throw fail("action.edit", "the edit changes nothing", .invalidInput) }
                // An edit replaces the text only: a signed edit binds the content before it and
                // the new text (statements.md §2), so assets and price are that content's.
                let before = state.proposal.preview
                guard e.preview.assets == before.assets, e.preview.price?.bitPattern == before.price?.bitPattern else {
                    throw fail("action.edit", "the edit changes assets or price (\(e.preview.assets), \(e.preview.price.map { "\($0)" } ?? "none") "
                        + "against \(before.assets), \(before.price.map { "\($0)" } ?? "none")); an edit replaces the text only", .invalidInput)
                }
            case .tapRefused(let t):
                guard refusals <= RefusalRecorder.perMinute else {
                    throw fail("refusal.rate", "refusal \(refusals) of device \(event.device ?? "?") in the minute of "
                        + "\(event.at.iso8601); the engine records at most \(RefusalRecorder.perMinute)", nil)
                }
                // Authenticated (the device's key in force signed it), and a refusal the
                // policy gives that signed step on the action as it stood.
                try RecordedRefusal.check(event, t, device: device, storeId: try reader.storeId(), rp: rp)
                let code = RecordedRefusal.rejudge(event, t, state: state, device: device, policy: policy, rules: rules)
                guard code?.rawValue == t.code else {
                    throw fail("tap.refused", "recorded as refused \(t.code); the policy gives "
                        + (code.map { "\($0.rawValue)" } ?? "no refusal") + " for that \(t.step.rawValue)", nil)
                }
            case .executed, .failed:
                guard state.status == .approved || state.status == .autoShipped else {
                    throw fail("action.outcome", "an outcome for an action that is \(state.status.rawValue)", .notApproved)
                }
            case .expired:
                if let d = state.decision { throw Policy.alreadyDecided(state, d) }
                guard state.status == .pending, let at = state.proposal.expiresAt, at <= event.at else {
                    throw fail("action.expire", "expired before its expires_at", .invalidInput)
                }
            default:
                throw fail("event.type", "not an action event", .corruptEvent)
            }
            // The policy's device checks passed: a keyed device's event must carry its proof.
            if let device, event.type != .tapRefused {
                if storeId == nil { storeId = .some(try reader.storeId()) }
                do { try RecordedProof.check(event, device: device, storeId: storeId ?? nil, rp: rp) } catch let e as LedgerError {
                    throw fail("proof", e.message, e.code)
                }
                if let p = event.payload.proof, p.contentHash != state.contentHash {
                    throw fail("proof", "signed over content \(p.contentHash.hex.prefix(12)), not the action's", .staleContent)
                }
            }
            do { try signCounts.accept(event) } catch let e as LedgerError { throw fail("proof", e.message, e.code) }
        } catch let e as LedgerError {
            throw fail(Self.claimedRule(event), e.message, e.code)
        }
        state.apply(event)
        keep(state)
        return decided
    }

    /// A tap the engine would have counted: accepted (not a duplicate), on the action's
    /// content, under the policy version in force; returns the rule and stakes it decides.
    @discardableResult
    func judgeTap(_ step: TapStep, _ content: Digest, _ version: UInt32, userVerified: Bool, _ level: ProofLevel,
                          _ rules: UInt32,
                          _ state: ActionState,
                          _ device: DeviceState?, _ event: Event,
                          _ fail: (String, String, LedgerError.Code?) -> Mismatch) throws -> (String, Stakes) {
        let verdict = try Policy.judgeTap(step, on: state, device: device, deviceId: event.device ?? "", seenContent: content,
                                          userVerified: userVerified, proof: level, policy: policy, now: event.at, rules: rules)
        guard case .accept(let rule, let stakes) = verdict else {
            throw fail(Policy.Rule.path(Policy.requirements(of: state.proposal, under: policy, rules: rules).stakes),
                       "a \(step.rawValue) already counted on this content: the engine records duplicates as nothing", nil)
        }
        guard version == policy.version else {
            throw fail(rule, "recorded under policy v\(version), v\(policy.version) was in force", nil)
        }
        guard event.actor == state.person else { throw fail(rule, "a tap by \(event.actor), not by \(state.person)", nil) }
        return (rule, stakes)
    }

    /// Live actions stay in memory; a decided or finished one leaves it.
    mutating func keep(_ state: ActionState) {
        if state.status == .pending { live[state.actionId] = state } else { live[state.actionId] = nil }
    }
}
