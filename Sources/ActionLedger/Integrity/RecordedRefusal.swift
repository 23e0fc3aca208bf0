/// Checks a recorded `tap.refused` offline (Specs/statements.md §2.3): the statement it
/// records is the one its envelope and proof imply (the step's parameter line aside, which
/// binds only a hash or a time), and the device's key in force at its seq signed it.
/// `verify --deep`/`--export` and decision replay run it; replay also re-judges the code.
enum RecordedRefusal {
    /// The parameter line each step's statement ends with, if any.
    static func parameter(_ step: Statement.Step) -> String? {
        switch step {
        case .hold: "until"
        case .edit: "text_sha256"
        case .dismiss: "reason_sha256"
        case .review, .confirm, .approve: nil
        }
    }

    /// - throws: `bad_proof` naming the `problem`.
    static func check(_ event: Event, _ t: TapRefusal, device: DeviceState?, storeId: Digest?, rp: RelyingParty?) throws {
        guard let device, let key = device.key, device.person == event.person, device.org == event.org else {
            throw RecordedProof.bad("a refusal recorded for \(event.device ?? "no device"), not a keyed device of \(event.person)", "key")
        }
        guard t.proof.keyFingerprint == key.fingerprint else {
            throw RecordedProof.bad("signed with key \(t.proof.keyFingerprint.hex.prefix(16))…, not \(device.device)'s key in force", "key")
        }
        if t.proof.webauthn == nil, t.proof.level != (key.protection == .userVerification ? .signedUV : .signed) {
            throw RecordedProof.bad("proof level \(t.proof.level.rawValue) for a key declared \(key.protection.rawValue)", "level")
        }
        let age = event.at.milliseconds(since: t.proof.claimedAt)
        guard age <= ProofGate.maxAge, -age <= ProofGate.maxAhead else {
            throw RecordedProof.bad("claimed time \(t.proof.claimedAt.iso8601) lies outside the window of \(event.at.iso8601)", "claimed_at")
        }
        guard let storeId, let actionId = event.actionId else { throw RecordedProof.bad("no store id or action", "statement") }
        let base = Statement.Tap(storeId: storeId, org: event.org, actionId: actionId, step: t.step, contentHash: t.proof.contentHash,
                                 device: device.device, commandId: event.commandId, claimedAt: t.proof.claimedAt)
        var lines = Array(base.lines.prefix(8))
        if let name = parameter(t.step) {
            // The recorded last line, if well formed: a canonical time, or 64 lowercase hex.
            let text = String(decoding: t.statement, as: UTF8.self)
            let last = text.split(separator: "\n").last.map(String.init) ?? ""
            let value = String(last.dropFirst(name.count + 1))
            let ok = last.hasPrefix(name + ":") && (name == "until" ? Timestamp(iso8601: value)?.iso8601 == value
                                                                  : value.count == 64 && Hex.decode(value) != nil)
            guard ok else { throw RecordedProof.bad("the statement's \(name) line is malformed", "statement") }
            lines.append((name, value))
        }
        guard Statement.render(Statement.tapDomain, lines) == t.statement else {
            throw RecordedProof.bad("the recorded statement is not the one the event implies", "statement")
        }
        try RecordedProof.verify(t.proof, key: key, statement: t.statement, rp: rp, device)
    }

    /// The refusal the engine gives this step now (replay): the policy's judgement of the
    /// signed step on `state`, nil if it would not refuse.
    static func rejudge(_ event: Event, _ t: TapRefusal, state: ActionState, device: DeviceState?, policy: PolicyDocument,
                        rules: UInt32) -> LedgerError.Code? {
        let level = t.proof.level
        do {
            switch t.step {
            case .review, .confirm, .approve:
                let step: TapStep = t.step == .review ? .review : t.step == .confirm ? .confirm : .approve
                _ = try Policy.judgeTap(step, on: state, device: device, deviceId: event.device ?? "", seenContent: t.proof.contentHash,
                                        userVerified: level == .signedUV, proof: level, policy: policy, now: event.at, rules: rules)
            case .dismiss, .edit, .hold:
                try Policy.judgeChange(t.step, on: state, device: device, deviceId: event.device ?? "", proof: level, policy: policy,
                                       now: event.at, rules: rules)
                if t.proof.contentHash != state.contentHash { return .staleContent }
            }
            return nil
        } catch let e as LedgerError {
            return e.code
        } catch {
            return nil
        }
    }
}
