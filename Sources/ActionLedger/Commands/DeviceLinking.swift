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
        try CommandHandler.requireOrg(org, of: person, reader)
        for (name, v) in [("device", deviceId), ("person", person), ("org", org)] {
            if let p = FieldReader.identifierProblem(v) { throw LedgerError(.invalidInput, "\(name) \(p)") }
        }
        guard !label.isEmpty, label.utf8.count <= FieldReader.Limit.name else {
            throw LedgerError(.invalidInput, "label must be 1…\(FieldReader.Limit.name) bytes")
        }
        if let existing = try reader.deviceState(deviceId) {
            throw LedgerError(.duplicateDevice, "device \(deviceId) is already linked to \(existing.person)"
                + (existing.isRevoked ? " (revoked; revoked ids are never reused)" : ""))
        }
        let link = DeviceLink(device: deviceId, label: label, platform: platform, key: key)
        if let key {
            // A person's keys are few; reading every device is bounded by the store's devices.
            let keyed = try reader.allDevices().filter { $0.person == person && $0.key != nil }
            let introducer = try key.introducer.flatMap { try reader.deviceState($0) }
            try checkKey(link, org: org, person: person, keyed: keyed, introducer: introducer, storeId: try reader.storeId())
        }
        return (org, link)
    }

    /// Who may vouch for a key. The operator is not the root of trust for a person's
    /// devices: it may link her first keyed device only; every later key needs a signature
    /// by an unrevoked keyed device of hers over the link statement. (Replay runs this too.)
    static func checkKey(_ link: DeviceLink, org: String, person: String, keyed: [DeviceState], introducer: DeviceState?,
                         storeId: Digest?) throws {
        guard let key = link.key else { return }
        if link.platform == .cli && key.protection == .userVerification {
            throw LedgerError(.invalidInput, "a cli device cannot declare user-verification: a key file enforces no biometrics",
                              details: ["field": "key_protection"])
        }
        switch key.trust {
        case .firstUse:
            guard keyed.isEmpty else {
                throw LedgerError(.introductionRequired, "person \(person) already has a keyed device ("
                    + keyed.map(\.device).joined(separator: ", ") + "): another keyed device needs --introduced-by one of them",
                    details: ["person": .string(person)])
            }
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
        }
    }
}

extension DeviceKey {
    /// The device that introduced this key, if one did.
    public var introducer: String? {
        if case .introducedBy(let d, _) = trust { return d }
        return nil
    }
}
