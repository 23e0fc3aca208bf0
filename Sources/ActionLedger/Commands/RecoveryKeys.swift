/// The rules of `person.recovery_key_set` (Specs/statements.md §1.2): who may put a
/// recovery key in force for a person. As for device keys, the operator is not the root of
/// trust: it may register one only with her first keyed device (in the same command, the
/// one moment it is trusted anyway); every later one is signed by an unrevoked keyed device
/// of hers or by the recovery key it replaces. The engine, decision replay and
/// `verify --deep`/`--export` run this same check.
enum RecoveryKeys {
    /// A person's recovery key in force, with the org it was set under.
    struct InForce: Sendable, Equatable {
        var set: RecoveryKeySet
        var org: String
        var seq: UInt64
    }

    /// Checks a registration for `person` of `org`, given her recovery key in force
    /// (`current`), the signing device as it stands (`signer`, for trust `device`) and, for
    /// trust `first_use`, the keyed link the same command records just before it.
    /// - throws: `invalid_input`, `introduction_required`, `bad_proof`.
    static func check(_ s: RecoveryKeySet, person: String, org: String, current: InForce?, signer: DeviceState?,
                      firstLink: DeviceLink?, storeId: Digest?) throws {
        // Who vouches comes first: on the operator's word there is nothing else to judge
        // (a later registration claiming first use is refused as such, whatever it replaces).
        if s.trust == .firstUse, current != nil || firstLink?.key?.trust != .firstUse {
            throw LedgerError(.introductionRequired, "a recovery key is set on the operator's word only with \(person)'s first "
                + "keyed device, in the same command; later, one of her unrevoked keyed devices or her recovery key in force "
                + "signs it", details: ["person": .string(person)])
        }
        guard s.previousFingerprint == current?.set.key.fingerprint else {
            throw LedgerError(.badProof, "the registration replaces recovery key " + (s.previousFingerprint.map { "\($0.hex.prefix(16))…" } ?? "none")
                + ", the key in force is " + (current.map { "\($0.set.key.fingerprint.hex.prefix(16))…" } ?? "none"),
                details: ["problem": "previous_key"])
        }
        if let current, current.org != org {
            throw LedgerError(.orgMismatch, "\(person)'s recovery key is of org \(current.org), not \(org)",
                              details: ["person": .string(person), "org": .string(org)])
        }
        guard s.key.fingerprint != current?.set.key.fingerprint else {
            throw LedgerError(.invalidInput, "that key is already \(person)'s recovery key", details: ["field": "public_key"])
        }
        switch s.trust {
        case .firstUse:
            return  // checked first, above
        case .device(let by, let signature):
            guard let d = signer, d.person == person, d.org == org, let key = d.key else {
                throw LedgerError(.introductionRequired, "device \(by) is not a keyed device of \(person): it cannot vouch for "
                    + "her recovery key", details: ["person": .string(person), "device": .string(by)])
            }
            if let at = d.revokedAt {
                throw LedgerError(.introductionRequired, "device \(by) was revoked at \(at.iso8601): it cannot vouch for a recovery key",
                                  details: ["person": .string(person), "device": .string(by)])
            }
            try verify(key.verifies, signature, s, person, org, storeId, by: "device \(by)'s key in force")
        case .recoveryKey(let signature):
            guard let current else {
                throw LedgerError(.introductionRequired, "\(person) has no recovery key to sign its replacement: one of her "
                    + "unrevoked keyed devices signs it", details: ["person": .string(person)])
            }
            try verify(current.set.key.verifies, signature, s, person, org, storeId, by: "the recovery key in force")
        }
    }

    private static func verify(_ verifies: ([UInt8], [UInt8]) -> Bool, _ signature: [UInt8], _ s: RecoveryKeySet,
                               _ person: String, _ org: String, _ storeId: Digest?, by: String) throws {
        guard let storeId, let signedBy = s.trust.signedBy else { throw LedgerError(.introductionRequired, "an empty store") }
        let statement = Statement.recoveryKey(storeId: storeId, org: org, person: person, key: s.key.fingerprint,
                                              previous: s.previousFingerprint, signedBy: signedBy)
        guard verifies(signature, statement) else {
            throw LedgerError(.badProof, "the recovery-key signature does not verify with \(by) over the recovery-key statement "
                + "for \(person)", details: ["problem": "signature"])
        }
    }

    /// Checks a recorded registration against the log as it stood before it (replay,
    /// `verify --deep`): `previous` is the event just before it, a first-use registration's link.
    static func check(recorded s: RecoveryKeySet, in event: Event, current: InForce?, devices: (String) -> DeviceState?,
                      previous: Event?, storeId: Digest?) throws {
        var firstLink: DeviceLink?
        if let p = previous, p.commandId == event.commandId {
            // Only a first keyed link's command also registers a recovery key, on first use.
            guard s.trust == .firstUse, p.person == event.person, p.org == event.org, case .deviceLinked(let link) = p.payload else {
                throw LedgerError(.introductionRequired, "a recovery key shares command \(event.commandId) with seq \(p.seq): only "
                    + "her first keyed link's command registers one, on first use", details: ["person": .string(event.person)])
            }
            firstLink = link
        }
        var signer: DeviceState?
        if case .device(let by, _) = s.trust { signer = devices(by) }
        try check(s, person: event.person, org: event.org, current: current, signer: signer, firstLink: firstLink, storeId: storeId)
    }
}

extension MetaKey {
    static let recoveryPrefix: [UInt8] = Array("recovery/".utf8)
    /// `recovery/PERSON` → seq of the person's `person.recovery_key_set` in force.
    static func recovery(_ person: String) -> [UInt8] { recoveryPrefix + Array(person.utf8) }
}

extension LogReader {
    /// `person`'s recovery key in force, if she has one.
    /// - throws: `corrupt_event` when the pointer names anything but her `person.recovery_key_set`.
    func recoveryKey(person: String) throws -> RecoveryKeys.InForce? {
        let seq = try dbs.meta.withValue(txn, key: MetaKey.recovery(person)) { b in
            guard b.count == 8 else { throw Self.corruptRecord("meta", "recovery/\(person)", length: b.count, expected: 8) }
            return Keys.readU64(b)
        }
        guard let seq else { return nil }
        guard let e = try event(seq)?.event, e.person == person, case .recoveryKeySet(let s) = e.payload else {
            throw LedgerError(.corruptEvent, "meta record recovery/\(person) points to seq \(seq), not her person.recovery_key_set",
                              details: ["index": "meta", "key": .string("recovery/\(person)"), "seq": .number(Double(seq))])
        }
        return RecoveryKeys.InForce(set: s, org: e.org, seq: seq)
    }
}

extension RecoveryKeys {
    /// A recovery key is in force once for a person, as a device key is (statements.md
    /// `recovery.once`): the registration statement binds the key it replaces, so a key she
    /// returned to would make the registration that replaced it, signed long ago and kept
    /// in the log, valid again. Her earlier keys are found by a scan of the log's type bytes
    /// at their fixed offset (a raw cursor walk, about 10 M events/s; only registrations are
    /// decoded): a registration is a rare operator act, and no index of them is kept. A
    /// person with no key in force has none to find.
    static func requireNew(_ key: RecoveryKey, person: String, current: InForce?, _ reader: LogReader) throws {
        guard current != nil else { return }
        // The stored value: chain hash (32 bytes), then the encoding's format byte, then the type code.
        let typeOffset = 33, code = EventType.personRecoveryKeySet.rawValue
        var earlier = false
        try reader.forEachRaw { _, v in
            guard v.count > typeOffset, v[typeOffset] == code else { return true }
            let e = try EventCodec.decode(UnsafeRawBufferPointer(rebasing: v[32...]))
            if e.person == person, case .recoveryKeySet(let s) = e.payload, s.key.fingerprint == key.fingerprint { earlier = true }
            return !earlier
        }
        if earlier {
            throw LedgerError(.invalidInput, "that key was \(person)'s recovery key before: a recovery key is in force once",
                              details: ["field": "public_key"])
        }
    }
}

extension AppendSession {
    /// Keeps `meta`'s key records current (`sign_count/KEY`, `recovery/PERSON`): called for
    /// every appended event.
    func indexKeyRecords(_ event: Event) throws {
        try indexSignCount(event)
        if case .recoveryKeySet = event.payload {
            try dbs.meta.put(txn, key: MetaKey.recovery(event.person), value: Keys.u64(event.seq))
        }
    }
}

/// `verify --deep`: the `recovery/` records of `meta` are exactly the log's, none missing,
/// none more. - throws: `integrity_failure` naming the record.
func compareRecoveryRecords(_ expected: [String: RecoveryKeys.InForce], with reader: LogReader) throws {
    for (person, r) in expected {
        let stored = try reader.dbs.meta.withValue(reader.txn, key: MetaKey.recovery(person)) { $0.count == 8 ? Keys.readU64($0) : 0 }
        guard stored == r.seq else {
            throw IndexVerifier.failure(reader.dbs.meta, MetaKey.recovery(person), r.seq, stored == nil ? "index_missing" : "index_mismatch",
                                        "does not point to seq \(r.seq), \(person)'s recovery key in force")
        }
    }
    try reader.dbs.meta.scan(reader.txn, from: MetaKey.recoveryPrefix) { k, _ in
        guard k.starts(with: MetaKey.recoveryPrefix) else { return false }
        let person = String(decoding: k[MetaKey.recoveryPrefix.count...], as: UTF8.self)
        guard expected[person] != nil else {
            throw IndexVerifier.failure(reader.dbs.meta, Array(k), nil, "index_mismatch", "names \(person), whom no recovery key implies")
        }
        return true
    }
}

extension Ledger {
    /// `person`'s recovery key in force, if any (`devices recovery-key show`).
    public func recoveryKey(person: String) throws -> (set: RecoveryKeySet, org: String, seq: UInt64)? {
        try read { try $0.recoveryKey(person: person).map { ($0.set, $0.org, $0.seq) } }
    }

    /// The recovery-key statement `signedBy` (`device:ID` or `recovery_key`) must sign to put
    /// `key` in force as `person`'s recovery key, from one snapshot.
    /// - throws: `introduction_required` for a person bound to no org (no device of hers,
    ///   nothing that could vouch for the key: cli.md).
    public func recoveryKeyStatement(person: String, key: RecoveryKey, signedBy: String) throws -> [UInt8] {
        try read { r in
            guard let org = try r.personOrg(person), let storeId = try r.storeId() else {
                throw LedgerError(.introductionRequired, "person \(person) has no devices: none can vouch for her recovery key",
                                  details: ["person": .string(person)])
            }
            return Statement.recoveryKey(storeId: storeId, org: org, person: person, key: key.fingerprint,
                                         previous: try r.recoveryKey(person: person)?.set.key.fingerprint, signedBy: signedBy)
        }
    }
}
