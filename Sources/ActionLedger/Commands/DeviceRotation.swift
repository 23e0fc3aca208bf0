/// The rules of `device.key_rotated` (Specs/statements.md §3.1): as for a later key at
/// link time, the operator is not the root of trust: a new key needs a signature by an
/// unrevoked keyed device of the same person — the device itself with the key it is
/// leaving, or another — and from the rotation on, signatures are checked against it.
/// The engine, decision replay and `verify --deep` run this same check.
enum DeviceRotation {
    /// The rotation to record for `device` (as it stands), vouched for by `signer` (as it
    /// stands; the device itself when it signs its own rotation).
    /// - throws: `unknown_device`, `device_revoked`, `invalid_input`, `introduction_required`, `bad_proof`.
    static func check(_ deviceId: String, device: DeviceState?, key: DeviceKey, signer: DeviceState?,
                      storeId: Digest?) throws -> KeyRotation {
        var introduction: (by: String, signature: [UInt8])?
        if case .introducedBy(let by, let signature) = key.trust { introduction = (by, signature) }
        let (device, old) = try checkBeforeSigning(deviceId, device: device, key: key, signerId: introduction?.by, signer: signer)
        guard let (by, signature) = introduction, let signerKey = signer?.key else {
            throw LedgerError(.introductionRequired, "a new key for \(deviceId) needs a signature", details: ["person": .string(device.person)])
        }
        guard let storeId else { throw LedgerError(.introductionRequired, "an empty store has no devices") }
        let statement = Statement.rotation(storeId: storeId, org: device.org, person: device.person, device: deviceId,
                                           platform: device.platform, key: key, previous: old.fingerprint, signedBy: by)
        guard signerKey.verifies(signature, over: statement) else {
            throw LedgerError(.badProof, "the rotation signature does not verify with device \(by)'s key in force "
                + "(\(signerKey.fingerprint.hex.prefix(16))…) over the rotation statement for \(deviceId)",
                details: ["problem": "signature", "device": .string(by)])
        }
        return KeyRotation(device: deviceId, previousFingerprint: old.fingerprint, key: key)
    }

    /// Every rule of §3.1 but the signature's, for a rotation `signerId` (nil: nobody named)
    /// would sign: the device as it stands and the key it leaves.
    static func checkBeforeSigning(_ deviceId: String, device: DeviceState?, key: DeviceKey, signerId: String?,
                                   signer: DeviceState?) throws -> (DeviceState, DeviceKey) {
        guard let device else {
            throw LedgerError(.unknownDevice, "device \(deviceId) is not linked", details: ["device": .string(deviceId)])
        }
        if let at = device.revokedAt {
            throw LedgerError(.deviceRevoked, "device \(deviceId) was revoked at \(at.iso8601): its key cannot change",
                              details: ["device": .string(deviceId), "revoked_at": .string(at.iso8601)])
        }
        guard let old = device.key else {
            throw LedgerError(.invalidInput, "device \(deviceId) has no key to rotate: link a keyed device instead",
                              details: ["field": "device"])
        }
        guard key.fingerprint != old.fingerprint else {
            throw LedgerError(.invalidInput, "the new key is the key already in force for \(deviceId)", details: ["field": "public_key"])
        }
        if device.platform == .cli && key.protection == .userVerification {
            throw LedgerError(.invalidInput, "a cli device cannot declare user-verification: a key file enforces no biometrics",
                              details: ["field": "key_protection"])
        }
        guard let by = signerId else {
            throw LedgerError(.introductionRequired, "a new key for \(deviceId) must be signed by a keyed device of "
                + "\(device.person) (the device itself with its current key, or another)", details: ["person": .string(device.person)])
        }
        guard let s = signer, s.person == device.person, s.org == device.org, s.key != nil else {
            throw LedgerError(.introductionRequired, "device \(by) is not a keyed device of \(device.person): it cannot vouch "
                + "for \(deviceId)'s new key", details: ["person": .string(device.person), "device": .string(by)])
        }
        if let at = s.revokedAt {
            throw LedgerError(.introductionRequired, "device \(by) was revoked at \(at.iso8601): it cannot vouch for a key",
                              details: ["person": .string(device.person), "device": .string(by)])
        }
        return (device, old)
    }

    /// Checks a recorded rotation (`event`) against the devices as they stood before it.
    static func check(recorded r: KeyRotation, in event: Event, devices: (String) throws -> DeviceState?, storeId: Digest?) throws {
        let device = try devices(r.device)
        if let d = device, d.person != event.person || d.org != event.org {
            throw LedgerError(.introductionRequired, "the rotation names \(event.person)/\(event.org), device \(r.device) is "
                + "\(d.person)/\(d.org)", details: ["problem": "person"])
        }
        let expected = try check(r.device, device: device, key: r.key, signer: try r.key.introducer.flatMap(devices), storeId: storeId)
        guard expected == r else {
            throw LedgerError(.badProof, "the rotation names previous key \(r.previousFingerprint.hex.prefix(16))…, the key in "
                + "force was \(expected.previousFingerprint.hex.prefix(16))…", details: ["problem": "previous_key"])
        }
    }
}

extension DeviceState {
    /// The device after `rotation`, recorded at `seq`: its new key in force from there.
    mutating func apply(_ rotation: KeyRotation, seq: UInt64) {
        key = rotation.key
        keySeq = seq
    }
}

extension Ledger {
    /// The rotation statement `signedBy` must sign to put `key` in force for `device`
    /// (what `devices rotate-key` signs), from one snapshot; `key.trust` is ignored.
    /// - throws: `unknown_device`; `invalid_input` for a device without a key.
    public func rotationStatement(device deviceId: String, key: DeviceKey, signedBy: String) throws -> [UInt8] {
        try read { r in
            guard let d = try r.deviceState(deviceId), let storeId = try r.storeId() else {
                throw LedgerError(.unknownDevice, "device \(deviceId) is not linked", details: ["device": .string(deviceId)])
            }
            guard let old = d.key else {
                throw LedgerError(.invalidInput, "device \(deviceId) has no key to rotate: link a keyed device instead",
                                  details: ["field": "device"])
            }
            return Statement.rotation(storeId: storeId, org: d.org, person: d.person, device: deviceId, platform: d.platform,
                                      key: key, previous: old.fingerprint, signedBy: signedBy)
        }
    }

    /// The rotation statement as ``rotationStatement(device:key:signedBy:)`` gives it, once
    /// every rule the engine will judge but the signature holds (§3.1 and `key.one_device`),
    /// so a device is never asked to sign a rotation bound to be refused (`ledger serve`).
    /// - throws: the refusal the rotation would get.
    public func checkedRotationStatement(device deviceId: String, key: DeviceKey, signedBy: String) throws -> [UInt8] {
        try read { r in
            let (d, old) = try DeviceRotation.checkBeforeSigning(deviceId, device: try r.deviceState(deviceId), key: key,
                                                                 signerId: signedBy, signer: try r.deviceState(signedBy))
            try DeviceLinking.requireUnused(key, for: deviceId, held: try r.keysEverHeld())
            guard let storeId = try r.storeId() else { throw LedgerError(.introductionRequired, "an empty store has no devices") }
            return Statement.rotation(storeId: storeId, org: d.org, person: d.person, device: deviceId, platform: d.platform,
                                      key: key, previous: old.fingerprint, signedBy: signedBy)
        }
    }

    /// The key in force for `device`, if it has one.
    public func deviceKey(_ deviceId: String) throws -> DeviceKey? {
        try read { try $0.deviceState(deviceId)?.key }
    }
}
