/// The rules of `device.linked` (Specs/policy.md §3, "Device keys"): identifiers, one org
/// per person, ids never reused, and who may vouch for a key.
enum DeviceLinking {
    /// The org the device takes and the link to record.
    /// - throws: `invalid_input`, `org_mismatch`, `duplicate_device`, `introduction_required`, `bad_proof`.
    static func check(_ deviceId: String, _ person: String, _ given: String, _ label: String, _ platform: Platform,
                      key: DeviceKey?, _ reader: LogReader) throws -> (String, DeviceLink) {
        // No org given: the device takes its person's (and binds nothing).
        guard let org = given.isEmpty ? try reader.personOrg(person) : given else {
            throw LedgerError(.invalidInput, "person \(person) has no org yet: give --org", details: ["field": "org"])
        }
        try CommandHandler.requireOrg(org, of: person, boundTo: try reader.personOrg(person))
        for (name, v) in [("device", deviceId), ("person", person), ("org", org)] {
            if let p = FieldReader.identifierProblem(v) { throw LedgerError(.invalidInput, "\(name) \(p)", details: ["field": .string(name)]) }
        }
        guard !label.isEmpty, label.utf8.count <= FieldReader.Limit.name else {
            throw LedgerError(.invalidInput, "label must be 1…\(FieldReader.Limit.name) bytes", details: ["field": "label"])
        }
        if let existing = try reader.deviceState(deviceId) {
            // Device ids are one namespace across the store, so a taken id must be refused
            // whoever took it; but another org's device is named no further (whose it is,
            // whether revoked): a pairing caller would otherwise probe another org's devices.
            guard existing.org == org else {
                throw LedgerError(.duplicateDevice, "device id \(deviceId) is taken (device ids are one namespace across the "
                    + "store, and are never reused): choose another")
            }
            throw LedgerError(.duplicateDevice, "device \(deviceId) is already linked to \(existing.person)"
                + (existing.isRevoked ? " (revoked; revoked ids are never reused)" : ""))
        }
        let link = DeviceLink(device: deviceId, label: label, platform: platform, key: key)
        if let key {
            // A person's keys are few; reading every device is bounded by the store's devices.
            try requireUnused(key, for: deviceId, held: try reader.keysEverHeld())
            let keyed = try reader.allDevices().filter { $0.person == person && $0.key != nil }
            let introducer = try key.introducer.flatMap { try reader.deviceState($0) }
            try checkKey(link, org: org, person: person, keyed: keyed, introducer: introducer,
                         recovery: try reader.recoveryKey(person: person), storeId: try reader.storeId())
        }
        return (org, link)
    }

    /// One key names one device in the audit (`key_fingerprint`): a key another device holds
    /// or ever held (`held`: fingerprint → device), revoked or rotated away, is not linked or
    /// rotated to again — a stolen device's key put back into service under a new name would
    /// sign as that device.
    /// - throws: `invalid_input` (`public_key`).
    static func requireUnused(_ key: DeviceKey, for deviceId: String, held: [Digest: String]) throws {
        // The device's own former keys too: a rotation statement binds the key it replaces,
        // so a key back in force would make the rotation that retired it valid again — anyone
        // holding that old signature could put the retired key's successor back.
        if let holder = held[key.fingerprint] {
            throw LedgerError(.invalidInput, holder == deviceId
                ? "that key was \(deviceId)'s before: a key is in force once, and a device does not return to one it left"
                : "that key is, or was, another device's: one key names one device", details: ["field": "public_key"])
        }
    }

    /// Who may vouch for a key. The operator is not the root of trust for a person's
    /// devices: it may link her first keyed device only; every later key needs a signature
    /// by an unrevoked keyed device of hers over the link statement, or — once every keyed
    /// device of hers is revoked — by her recovery key in force (`recovery`) over the
    /// recovery link statement. (Replay and `verify --deep` run this too.)
    static func checkKey(_ link: DeviceLink, org: String, person: String, keyed: [DeviceState], introducer: DeviceState?,
                         recovery: RecoveryKeys.InForce?, storeId: Digest?) throws {
        guard let key = link.key else { return }
        if link.platform == .cli && key.protection == .userVerification {
            throw LedgerError(.invalidInput, "a cli device cannot declare user-verification: a key file enforces no biometrics",
                              details: ["field": "key_protection"])
        }
        switch key.trust {
        case .firstUse:
            guard keyed.isEmpty else { throw firstUseSpent(person, keyed, recovery) }
        case .introducedBy(let by, let signature):
            guard let d = introducer, d.person == person, d.org == org, let introducerKey = d.key else {
                throw LedgerError(.introductionRequired, "device \(by) is not a keyed device of \(person): it cannot introduce one",
                                  details: ["person": .string(person), "device": .string(by)])
            }
            if let at = d.revokedAt {
                throw LedgerError(.introductionRequired, "device \(by) was revoked at \(at.iso8601): it cannot introduce one",
                                  details: ["person": .string(person), "device": .string(by)])
            }
            guard let storeId else { throw LedgerError(.introductionRequired, "an empty store has no devices to introduce one") }
            let statement = Statement.link(storeId: storeId, org: org, person: person, device: link.device,
                                           platform: link.platform, key: key, introducedBy: by)
            guard introducerKey.verifies(signature, over: statement) else {
                throw LedgerError(.badProof, "the introduction signature does not verify with device \(by)'s key over the "
                    + "link statement for \(link.device)", details: ["problem": "signature", "device": .string(by)])
            }
        case .recovery(let fingerprint, let signature):
            try checkRecovery(link, key, org: org, person: person, keyed: keyed, recovery: recovery, fingerprint, signature, storeId)
        }
    }

    /// A key vouched for by the person's recovery key: only once every keyed device of hers
    /// is revoked (while one is not, it introduces; so a recovery key alone, leaked or
    /// coerced, cannot add a device beside working ones without first revoking them all —
    /// which she notices), and signed by the recovery key in force.
    private static func checkRecovery(_ link: DeviceLink, _ key: DeviceKey, org: String, person: String, keyed: [DeviceState],
                                      recovery: RecoveryKeys.InForce?, _ fingerprint: Digest, _ signature: [UInt8],
                                      _ storeId: Digest?) throws {
        let details: JSONObject = ["person": .string(person)]
        guard let recovery, recovery.org == org else {
            throw LedgerError(.introductionRequired, "person \(person) has no recovery key: a key cannot be recovered for her",
                              details: details)
        }
        guard recovery.set.key.fingerprint == fingerprint else {
            throw LedgerError(.introductionRequired, "\(person)'s recovery key in force is \(recovery.set.key.fingerprint.hex.prefix(16))…, "
                + "not \(fingerprint.hex.prefix(16))…", details: details)
        }
        let live = keyed.filter { !$0.isRevoked }
        guard live.isEmpty else {
            throw LedgerError(.introductionRequired, "\(person) still has unrevoked keyed devices ("
                + live.map(\.device).joined(separator: ", ") + "): one of them introduces the new device (--introduced-by); "
                + "her recovery key links one only once every keyed device of hers is revoked", details: details)
        }
        guard let storeId else { throw LedgerError(.introductionRequired, "an empty store", details: details) }
        let statement = Statement.recoveryLink(storeId: storeId, org: org, person: person, device: link.device,
                                               platform: link.platform, key: key, recoveryKey: fingerprint)
        guard recovery.set.key.verifies(signature, over: statement) else {
            throw LedgerError(.badProof, "the recovery signature does not verify with \(person)'s recovery key over the recovery "
                + "link statement for \(link.device)", details: ["problem": "signature"])
        }
    }

    /// Trust on first use is spent once a person has had a keyed device; the refusal says
    /// what can still vouch for her next key.
    private static func firstUseSpent(_ person: String, _ keyed: [DeviceState], _ recovery: RecoveryKeys.InForce?) -> LedgerError {
        let names = keyed.map(\.device).joined(separator: ", ")
        let details: JSONObject = ["person": .string(person)]
        guard keyed.allSatisfy(\.isRevoked) else {
            return LedgerError(.introductionRequired, "person \(person) already has a keyed device (\(names)): another keyed "
                + "device needs --introduced-by one of her unrevoked ones", details: details)
        }
        if let recovery {
            return LedgerError(.introductionRequired, "every keyed device of \(person) (\(names)) is revoked: link the new one with "
                + "--recovered-by-key, signed by her recovery key (\(recovery.set.key.fingerprint.hex.prefix(16))…)", details: details)
        }
        return LedgerError(.introductionRequired, "every keyed device of \(person) (\(names)) is revoked and she registered no "
            + "recovery key: no keyed device can be linked for her (the operator cannot vouch for a key after her first); "
            + "unkeyed devices can still be linked", details: details)
    }

    /// The device a person revoked one of hers from (`by`, recorded as the revocation's
    /// `device`): linked, not revoked, hers, she is the actor, and its user-verified key in
    /// force made `proof` (statements.md §3.4). The engine checks it when it records the
    /// revocation and decision replay when it reads one. Without a proof it passes only when
    /// not `required`: a schema-1 revocation, recorded before builds kept the signature.
    static func checkRevoker(_ by: String, _ revoker: DeviceState?, of target: DeviceState, actor: String,
                             proof: RevocationProof?, required: Bool, storeId: Digest?) throws {
        guard let revoker else {
            throw LedgerError(.unknownDevice, "device \(by), named as the one the revocation was made from, is not linked",
                              details: ["device": .string(by)])
        }
        if let at = revoker.revokedAt {
            throw LedgerError(.deviceRevoked, "device \(by) was revoked at \(at.iso8601): no revocation can be made from it",
                              details: ["device": .string(by), "revoked_at": .string(at.iso8601)])
        }
        guard revoker.person == target.person, revoker.org == target.org, actor == target.person else {
            throw LedgerError(.deviceNotOwned, "a revocation of \(target.device) made from \(by) must be its own person's, from her device",
                              details: ["device": .string(by)])
        }
        // She proves it with that device's user-verified key (the server's signed challenge):
        // no other device can have made one.
        guard revoker.key?.protection == .userVerification else {
            throw LedgerError(.userVerificationRequired, "revoking a device needs a user-verified key; \(by) has none",
                              details: ["device": .string(by)])
        }
        if let proof {
            try proof.check(revoking: target.device, by: by, key: revoker.key, storeId: storeId)
        } else if required {
            throw RecordedProof.bad("a revocation made from device \(by) needs its signature over the challenge", "signature")
        }
    }
}

extension DeviceKey {
    /// The device that introduced this key, if one did.
    public var introducer: String? {
        if case .introducedBy(let d, _) = trust { return d }
        return nil
    }

    /// Whether the key was linked by the person's recovery key.
    public var isRecovered: Bool {
        if case .recovery = trust { return true }
        return false
    }
}
