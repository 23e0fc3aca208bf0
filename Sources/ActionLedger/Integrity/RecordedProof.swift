/// Checks the proofs the log records, offline (Specs/statements.md §2.1, §4 "Offline
/// verification"): a keyed device's taps carry a proof whose statement, rebuilt from the
/// event, the store id and the proof, is signed by the device's key; every introduced key's
/// introduction verifies. Decision replay and `verify --deep` run it.
enum RecordedProof {
    /// The statement a recorded tap, dismissal, edit or hold was signed over; nil for
    /// other events.
    static func statement(_ event: Event, _ proof: SignedProof, storeId: Digest) -> Statement.Tap? {
        guard let actionId = event.actionId, let device = event.device else { return nil }
        var t = Statement.Tap(storeId: storeId, org: event.org, actionId: actionId, step: .review, contentHash: proof.contentHash,
                              device: device, commandId: event.commandId, claimedAt: proof.claimedAt)
        switch event.payload {
        case .reviewed: t.step = .review
        case .confirmed: t.step = .confirm
        case .approved: t.step = .approve
        case .dismissed(let d): (t.step, t.reason) = (.dismiss, d.reason)
        case .edited(let e): (t.step, t.text) = (.edit, e.preview.text)
        case .held(let h): (t.step, t.until) = (.hold, h.until)
        default: return nil
        }
        return t
    }

    /// Checks `event`'s proof against `device` as it stood at the event.
    /// - throws: `proof_required`, `bad_proof` naming what does not hold.
    static func check(_ event: Event, device: DeviceState, storeId: Digest?, rp: RelyingParty?) throws {
        let proof = event.payload.proof
        guard let key = device.key else {
            if proof != nil { throw bad("device \(device.device) has no key, yet the event carries a proof", "key") }
            return
        }
        guard let proof else {
            throw LedgerError(.proofRequired, "device \(device.device) is keyed, yet the event carries no proof",
                              details: ["device": .string(device.device)])
        }
        guard proof.keyFingerprint == key.fingerprint else {
            throw bad("signed with key \(proof.keyFingerprint.hex.prefix(16))…, device \(device.device)'s key is "
                + "\(key.fingerprint.hex.prefix(16))…", "key")
        }
        if proof.webauthn == nil, proof.level != (key.protection == .userVerification ? .signedUV : .signed) {
            throw bad("proof level \(proof.level.rawValue) for a key declared \(key.protection.rawValue)", "level")
        }
        if case .approved(let a) = event.payload, proof.level == .signedUV, !a.userVerified {
            throw bad("a signed_uv approval must record user_verified", "level")
        }
        let age = event.at.milliseconds(since: proof.claimedAt)
        guard age <= ProofGate.maxAge, -age <= ProofGate.maxAhead else {
            throw bad("claimed time \(proof.claimedAt.iso8601) lies outside the window of the engine's \(event.at.iso8601)", "claimed_at")
        }
        guard let storeId, let statement = statement(event, proof, storeId: storeId) else {
            throw bad("no statement to rebuild", "statement")
        }
        try verify(proof, key: key, statement: statement.bytes, rp: rp, device)
    }

    /// The signature verifies over `statement` (a webauthn assertion against the relying
    /// party in force), proving exactly the level recorded.
    static func verify(_ proof: SignedProof, key: DeviceKey, statement: [UInt8], rp: RelyingParty?, _ device: DeviceState) throws {
        // The level by the flag alone (as builds before the cap recorded it), then as the engine
        // records it now: a key that sets its own flags proves signed (WebAuthn.swift). An event
        // an earlier build recorded at the first stays verifiable (events.md, Versioning).
        let flagged: ProofLevel
        do {
            flagged = try key.proofLevel(signature: proof.signature, webauthn: proof.webauthn, statement: statement, rp: rp,
                                         platform: device.platform, capped: false)
        } catch let e as LedgerError {
            throw bad("\(e.message) (device \(device.device)'s key, the statement the event rebuilds)", e.problem)
        }
        let level = proof.webauthn != nil && !DeviceKey.authenticatorSetsFlags(key.protection, device.platform) ? .signed : flagged
        guard proof.level == level || proof.level == flagged else {
            throw bad("recorded at level \(proof.level.rawValue), the proof gives \(level.rawValue)", "level")
        }
    }

    static func bad(_ message: String, _ problem: String) -> LedgerError {
        LedgerError(.badProof, message, details: ["problem": .string(problem)])
    }
}

extension Payload {
    /// The device's proof a signed tap, dismissal, edit or hold records.
    public var proof: SignedProof? {
        switch self {
        case .reviewed(let t), .confirmed(let t): t.proof
        case .approved(let a): a.proof
        case .dismissed(let d): d.proof
        case .held(let h): h.proof
        case .edited(let e): e.proof
        default: nil
        }
    }
}

/// `verify --deep`'s pass over the proofs: every keyed link's introduction and every signed
/// event against the key in force for its device at its seq.
struct ProofScan {
    private var storeId: Digest?
    private var rp: RelyingParty?
    private var devices: [String: DeviceState] = [:]
    /// Each person's recovery key in force.
    private(set) var recoveryKeys: [String: RecoveryKeys.InForce] = [:]
    private var previous: Event?
    /// Each WebAuthn key's last accepted non-zero counter (SignCount).
    private(set) var signCounts = SignCounts()
    private(set) var checked = 0

    /// - throws: `integrity_failure` naming the seq, with the proof's `problem`.
    mutating func check(_ stored: StoredEvent) throws {
        let event = stored.event
        if event.seq == 1 { storeId = stored.hash }
        do {
            switch event.payload {
            case .deviceLinked(let link):
                if let key = link.key {
                    let keyed = devices.values.filter { $0.person == event.person && $0.key != nil }
                    try DeviceLinking.checkKey(link, org: event.org, person: event.person, keyed: Array(keyed),
                                               introducer: key.introducer.flatMap { devices[$0] },
                                               recovery: recoveryKeys[event.person], storeId: storeId)
                    checked += 1
                }
                devices[link.device] = DeviceState(device: link.device, person: event.person, org: event.org, label: link.label,
                                                   platform: link.platform, linkedAt: event.at, revokedAt: nil, key: link.key,
                                                   keySeq: event.seq)
            case .deviceRevoked(let r):
                // The signature of the device she revoked it from (schema 2), with its key as it stood.
                if let proof = r.proof {
                    guard let by = event.device else { throw RecordedProof.bad("a revocation no device made carries a signature", "device") }
                    try proof.check(revoking: r.device, by: by, key: devices[by]?.key, storeId: storeId)
                    checked += 1
                }
                devices[r.device]?.revokedAt = event.at
            case .deviceKeyRotated(let k):
                try DeviceRotation.check(recorded: k, in: event, devices: { devices[$0] }, storeId: storeId)
                devices[k.device]?.apply(k, seq: event.seq)
                checked += 1
            case .tapRefused(let t):
                try RecordedRefusal.check(event, t, device: event.device.flatMap { devices[$0] }, storeId: storeId, rp: rp)
                checked += 1
            case .recoveryKeySet(let s):
                try RecoveryKeys.check(recorded: s, in: event, current: recoveryKeys[event.person], devices: { devices[$0] },
                                       previous: previous, storeId: storeId)
                recoveryKeys[event.person] = RecoveryKeys.InForce(set: s, org: event.org, seq: event.seq)
                checked += 1
            case .relyingParty(let r):
                rp = r
            default:
                if let id = event.device, let device = devices[id], event.payload.proof != nil || device.key != nil,
                   RecordedProof.statement(event, event.payload.proof ?? Self.none, storeId: .zero) != nil {
                    try RecordedProof.check(event, device: device, storeId: storeId, rp: rp)
                    checked += 1
                }
            }
            // After the signature, as WebAuthn orders it: a counter that does not rise.
            try signCounts.accept(event)
            previous = event
        } catch let e as LedgerError {
            var details: JSONObject = ["seq": .number(Double(event.seq)), "problem": e.details["problem"] ?? .string(e.code.rawValue)]
            details["proof_code"] = .string(e.code.rawValue)
            details["field"] = .string([.deviceLinked, .deviceKeyRotated, .personRecoveryKeySet].contains(event.type) ? "data.key" : "data.proof")
            throw LedgerError(.integrityFailure, "seq \(event.seq) (\(event.type.name)): \(e.message)", details: details)
        }
    }

    private static let none = SignedProof(claimedAt: Timestamp(milliseconds: 0), contentHash: .zero, keyFingerprint: .zero,
                                          level: .signed, signature: [])
}

extension Ledger {
    /// Checks every proof in the log (`verify --deep`); returns how many it checked.
    /// - throws: `integrity_failure` with `seq` and `problem`.
    public func verifyProofs() throws -> Int {
        try read { reader in
            var scan = ProofScan()
            try reader.forEach { stored in
                try scan.check(stored)
                return true
            }
            // The engine judges counters by meta's records: they must be the log's.
            if try MetaLayout.layout(reader.dbs, reader.txn) >= 3 { try scan.signCounts.compare(with: reader) }
            try compareRecoveryRecords(scan.recoveryKeys, with: reader)
            return scan.checked
        }
    }
}
