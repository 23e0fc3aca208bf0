/// Runs one ``CommandRequest`` inside an ``AppendSession``: the only place where state is
/// read, the policy consulted and events appended.
enum CommandHandler {
    /// - parameter filings: learns the filing of an action the command judged, when its
    ///   proposal was committed before this transaction (``KnownFilings``).
    static func run(_ request: CommandRequest, in session: AppendSession, learning filings: inout KnownFilings) throws -> CommandResult {
        if let problem = FieldReader.identifierProblem(request.commandId) {
            throw LedgerError(.invalidInput, "command id \(problem)", details: ["field": "command_id"])
        }
        let reader = session.reader
        if let done = try reader.command(request.commandId) {
            let events = try CommandReplay.events(of: request.commandId, done, reader)
            if let first = events.first?.event, CommandReplay.answers(request.command, first) {
                return try CommandReplay.result(request, events, reader)
            }
            // Another device or command with a used id gets the refusal it would get without
            // the id (judged, then rolled back), never the original command's result.
            var ignored: ActionState?
            do {
                try session.nested {
                    _ = try decide(request, session, before: &ignored)
                    throw CommandReplay.RollBack()
                }
            } catch is CommandReplay.RollBack {}
            throw LedgerError(.invalidInput, "command id \(request.commandId) was already used by another command",
                              details: ["field": "command_id"])
        }
        try request.authority?.requireUnrevoked(reader)
        var before: ActionState?
        let writes = session.writes
        var result: CommandResult
        do {
            result = try decide(request, session, before: &before)
        } catch let e as LedgerError {
            // An authenticated refusal is recorded, and its command id with it: the proof it
            // carried is spent. Otherwise anyone who reads the log could submit that proof
            // again once the step became possible (an approval signed before its review).
            guard session.writes == writes, let now = try? TimeRules.check(request.now, head: try session.headTime()),
                  let refusal = try RefusalRecorder.refusal(for: request, e, reader: reader, now: now),
                  let id = request.command.actionId, let s = try reader.actionState(id) else { throw e }
            let stored = try session.append(Event(at: now, actor: s.person, device: CommandStatement.deviceId(request.command),
                                                  commandId: request.commandId, org: s.org, person: s.person, actionId: id,
                                                  payload: .tapRefused(refusal)))
            try session.recordCommand(request.commandId, first: stored.seq, count: 1)
            var refused = CommandResult(commandId: request.commandId, events: [stored], replayed: false, action: s)
            var details = e.details
            details["recorded_seq"] = .number(Double(stored.event.seq))
            refused.refusal = LedgerError(e.code, e.message + " (recorded as tap.refused, seq \(stored.event.seq))", details: details)
            return refused
        }
        if let before, before.proposalSeq <= session.headBefore.seq { filings.learn(before) }
        if !result.events.isEmpty {
            try session.recordCommand(request.commandId, first: result.events[0].seq, count: result.events.count)
        }
        if let id = request.command.actionId {
            // Fold what this command appended into the state it judged, rather than
            // re-reading and decoding the action's whole stream from the log.
            result.action = try before == nil && result.events.isEmpty
                ? reader.actionState(id) : fold(before, result.events)
            result.nextTap = try result.action.flatMap { Policy.nextTap($0, under: try session.policy(org: $0.org)) }
        }
        return result
    }

    /// `state` with `appended` (this command's events, all on its action) applied:
    /// the same fold ``LogReader/actionState(_:)`` makes over the stored stream.
    static func fold(_ state: ActionState?, _ appended: [StoredEvent]) -> ActionState? {
        var state = state
        for stored in appended {
            if case .proposed(let p) = stored.event.payload {
                state = ActionState(proposed: stored.event, proposal: p)
            } else {
                state?.apply(stored.event)
            }
        }
        return state
    }

    /// Judges and appends; `before` receives the action's state as judged, if any.
    private static func decide(_ request: CommandRequest, _ session: AppendSession,
                               before: inout ActionState?) throws -> CommandResult {
        let reader = session.reader
        let now = try TimeRules.check(request.now, head: try session.headTime())
        var appended: [StoredEvent] = []
        func append(actor: String, device: String?, org: String, person: String, actionId: String?, _ payload: Payload) throws {
            appended.append(try session.append(Event(at: now, actor: actor, device: device, commandId: request.commandId,
                                                     org: org, person: person, actionId: actionId, payload: payload)))
        }
        func action(_ id: String) throws -> ActionState {
            guard let s = try reader.actionState(id) else {
                throw LedgerError(.unknownAction, "no action \(id)", details: ["action_id": .string(id)])
            }
            before = s
            return s
        }
        func onAction(_ s: ActionState, device: String, _ payload: Payload) throws {
            try append(actor: s.person, device: device, org: s.org, person: s.person, actionId: s.actionId, payload)
        }
        var duplicate = false
        // The device's proof is checked before the policy judges (Specs/statements.md).
        func gate(_ s: ActionState, _ device: DeviceState?) throws -> SignedProof? {
            try ProofGate.check(request, action: s, device: device, storeId: try session.storeId(), rp: try session.relyingParty(), now: now,
                                lastSignCount: { try reader.signCount($0)?.count })
        }
        // Dismiss, edit, hold: proof, then the policy's checks, then the signed content.
        func change(_ step: Statement.Step, _ s: ActionState, _ deviceId: String) throws -> SignedProof? {
            let device = try session.deviceState(deviceId)
            let proof = try gate(s, device)
            try Policy.judgeChange(step, on: s, device: device, deviceId: deviceId, proof: .of(proof, userVerified: false),
                                   policy: try session.policy(org: s.org), now: now)
            if let proof, proof.contentHash != s.contentHash { throw ProofGate.stale(s, proof.contentHash) }
            return proof
        }

        switch request.command {
        case .propose(let input):
            // An action past its expiry can no longer be decided (events.md), auto-ship included.
            if let expires = input.proposal.expiresAt, expires <= now || expires >= TimeRules.latest {
                throw LedgerError(.invalidInput, "expires_at \(expires.iso8601) is not after the engine's time \(now.iso8601) "
                    + "and before \(TimeRules.latest.iso8601), as every engine time is", details: ["field": "expires_at"])
            }
            if let at = input.proposal.scheduledFor, at < TimeRules.earliest || at >= TimeRules.latest {
                throw LedgerError(.invalidInput, "scheduled_for \(at.iso8601) is outside 2000…2100, as every engine time is",
                                  details: ["field": "scheduled_for"])
            }
            if try reader.hasAction(input.actionId) {
                throw LedgerError(.duplicateAction, "action \(input.actionId) was already proposed",
                                  details: ["action_id": .string(input.actionId)])
            }
            try requireOrg(input.org, of: input.person, boundTo: try session.personOrg(input.person))
            let policy = try session.policy(org: input.org)
            var proposal = input.proposal
            proposal.pinned = Policy.pin(proposal, under: policy)
            try append(actor: "specialist:\(input.proposal.specialist.name)", device: nil, org: input.org,
                       person: input.person, actionId: input.actionId, .proposed(proposal))
            let today = try session.autoShipped(person: input.person, day: now.utcDay)
            if let rule = Policy.autoShipRule(for: input.proposal, policy: policy, autoShippedToday: today) {
                try append(actor: Event.systemPolicyActor, device: nil, org: input.org, person: input.person,
                           actionId: input.actionId,
                           .autoShipped(AutoShip(contentHash: input.proposal.contentHash, policyVersion: policy.version,
                                                 rule: rule, confidence: input.proposal.confidence,
                                                 rulesVersion: Policy.rulesVersion)))
            }

        case .tap(let step, let id, let deviceId, let userVerified, let seen):
            let s = try action(id)
            let device = try session.deviceState(deviceId)
            let proof = try gate(s, device)
            if let payload = try tapPayload(step, s, device, deviceId, userVerified: userVerified, seen: seen, proof: proof,
                                            policy: try session.policy(org: s.org), now: now) {
                try onAction(s, device: deviceId, payload)
            } else {
                duplicate = true
            }

        case .dismiss(let id, let deviceId, let reason):
            try FieldReader.requireReason(reason)
            let s = try action(id)
            let proof = try change(.dismiss, s, deviceId)
            try onAction(s, device: deviceId, .dismissed(Dismissal(reason: reason, policyVersion: try session.policy(org: s.org).version,
                                                                  rulesVersion: Policy.rulesVersion, proof: proof)))

        case .edit(let id, let deviceId, let text):
            let s = try action(id)
            let proof = try change(.edit, s, deviceId)
            guard text.utf8.count <= FieldReader.Limit.text else {
                throw LedgerError(.invalidInput, "text is \(text.utf8.count) bytes; the limit is \(FieldReader.Limit.text)",
                                  details: ["field": "text"])
            }
            var preview = s.proposal.preview
            preview.text = text
            guard preview != s.proposal.preview else {
                throw LedgerError(.invalidInput, "the edit does not change action \(id)'s preview", details: ["field": "text"])
            }
            var edit = Edit(preview: preview)
            edit.proof = proof
            try onAction(s, device: deviceId, .edited(edit))

        case .hold(let id, let deviceId, let until):
            let s = try action(id)
            let proof = try change(.hold, s, deviceId)
            guard until > now, until < TimeRules.latest else {
                throw LedgerError(.invalidInput, "hold until \(until.iso8601) is not after now (\(now.iso8601)) and before "
                    + "\(TimeRules.latest.iso8601), as every engine time is", details: ["field": "until"])
            }
            try onAction(s, device: deviceId, .held(Hold(until: until, proof: proof)))

        case .recordOutcome(let id, let succeeded, let outcome):
            let s = try action(id)
            guard s.status == .approved || s.status == .autoShipped else {
                throw LedgerError(.notApproved, "action \(id) is \(s.status.rawValue); only approved or auto-shipped actions run")
            }
            guard case .object(var o) = outcome else { throw LedgerError(.invalidInput, "outcome must be a JSON object") }
            // Null is no device given (events.md: null counts as absent): the deciding one fills it.
            if o["device"] == nil || o["device"] == .null { o["device"] = s.decision?.device.map(JSON.string) ?? .null }
            let text = JSON.object(o).serialized()
            guard text.utf8.count <= FieldReader.Limit.outcome else {
                throw LedgerError(.invalidInput, "outcome is \(text.utf8.count) bytes; the limit is \(FieldReader.Limit.outcome)")
            }
            let payload: Payload = succeeded ? .executed(Outcome(outcome: text)) : .failed(Outcome(outcome: text))
            try append(actor: request.actor, device: nil, org: s.org, person: s.person, actionId: id, payload)

        case .expire(let id):
            let s = try action(id)
            if let d = s.decision { throw Policy.alreadyDecided(s, d) }
            if s.status == .expired {
                throw LedgerError(.alreadyDecided, "action \(id) already expired", details: ["action_id": .string(id), "state": "expired"])
            }
            guard s.status == .pending, let e = s.proposal.expiresAt, e <= now else {
                throw LedgerError(.invalidInput, "action \(id) has not expired (expires_at: \(s.proposal.expiresAt?.iso8601 ?? "none"))")
            }
            try append(actor: Event.systemPolicyActor, device: nil, org: s.org, person: s.person, actionId: id, .expired)

        case .linkDevice(let deviceId, let person, let given, let label, let platform):
            let (org, link) = try DeviceLinking.check(deviceId, person, given, label, platform, key: nil, reader)
            try append(actor: request.actor, device: nil, org: org, person: person, actionId: nil, .deviceLinked(link))

        case .linkKeyedDevice(let deviceId, let person, let given, let label, let platform, let key, let recoveryKey):
            let (org, link) = try DeviceLinking.check(deviceId, person, given, label, platform, key: key, reader)
            // Her first keyed device may bring her recovery key: checked before either is appended.
            let recovery = try recoveryKey.map { k in
                let s = RecoveryKeySet(key: k, previousFingerprint: nil, trust: .firstUse)
                try RecoveryKeys.check(s, person: person, org: org, current: try reader.recoveryKey(person: person), signer: nil,
                                       firstLink: link, storeId: try reader.storeId())
                return s
            }
            try append(actor: request.actor, device: nil, org: org, person: person, actionId: nil, .deviceLinked(link))
            if let recovery { try append(actor: request.actor, device: nil, org: org, person: person, actionId: nil, .recoveryKeySet(recovery)) }

        case .setRecoveryKey(let person, let key, let trust):
            guard let org = try reader.personOrg(person) else {
                throw LedgerError(.introductionRequired, "person \(person) has no keyed device to vouch for a recovery key",
                                  details: ["person": .string(person)])
            }
            let current = try reader.recoveryKey(person: person)
            let s = RecoveryKeySet(key: key, previousFingerprint: current?.set.key.fingerprint, trust: trust)
            var signer: DeviceState?
            if case .device(let by, _) = trust { signer = try reader.deviceState(by) }
            try RecoveryKeys.check(s, person: person, org: org, current: current, signer: signer, firstLink: nil,
                                   storeId: try reader.storeId())
            try RecoveryKeys.requireNew(key, person: person, current: current, reader)
            try append(actor: request.actor, device: nil, org: org, person: person, actionId: nil, .recoveryKeySet(s))

        case .revokeDevice(let deviceId, let reason, let by, let proof):
            try FieldReader.requireReason(reason)
            guard let d = try reader.deviceState(deviceId) else {
                throw LedgerError(.unknownDevice, "device \(deviceId) is not linked", details: ["device": .string(deviceId)])
            }
            if let at = d.revokedAt {
                throw LedgerError(.deviceRevoked, "device \(deviceId) was already revoked at \(at.iso8601)",
                                  details: ["device": .string(deviceId), "revoked_at": .string(at.iso8601)])
            }
            if let by {
                try DeviceLinking.checkRevoker(by, try reader.deviceState(by), of: d, actor: request.actor,
                                               proof: proof, required: true, storeId: try session.storeId())
            }
            try append(actor: request.actor, device: by, org: d.org, person: d.person, actionId: nil,
                       .deviceRevoked(DeviceRevocation(device: deviceId, reason: reason, proof: by == nil ? nil : proof)))

        case .rotateDeviceKey(let deviceId, let key):
            let device = try reader.deviceState(deviceId)
            let signer = key.introducer == deviceId ? device : try key.introducer.flatMap { try reader.deviceState($0) }
            let rotation = try DeviceRotation.check(deviceId, device: device, key: key, signer: signer, storeId: try reader.storeId())
            try DeviceLinking.requireUnused(key, for: deviceId, held: try reader.keysEverHeld())
            try append(actor: request.actor, device: nil, org: device?.org ?? "", person: device?.person ?? "", actionId: nil,
                       .deviceKeyRotated(rotation))

        case .setRelyingParty(let rp):
            try rp.requirePorts()
            // Store-wide, like store.created: proofs name no org's relying party.
            try append(actor: request.actor, device: nil, org: "store", person: request.actor, actionId: nil, .relyingParty(rp))

        case .setPolicy(var document, let org):
            if let p = FieldReader.identifierProblem(org) { throw LedgerError(.invalidInput, "org \(p)") }
            let current = try session.policy(org: org)
            // Only a damaged record holds the largest version: none can follow it.
            guard current.version < .max else {
                throw LedgerError(.corruptEvent, "the policy in force for \(org) claims version \(current.version), which no "
                    + "policy can follow: the store is damaged (run `ledger verify --deep`)")
            }
            if document.version == 0 { document.version = current.version + 1 }
            guard document.version == current.version + 1 else {
                throw LedgerError(.invalidInput, "policy version \(document.version) does not follow the current version "
                    + "\(current.version): give \(current.version + 1) or omit it", details: ["field": "version"])
            }
            try append(actor: request.actor, device: nil, org: org, person: request.actor, actionId: nil, .policySet(document))
        }
        return CommandResult(commandId: request.commandId, events: appended, replayed: false, duplicateTap: duplicate)
    }
}
