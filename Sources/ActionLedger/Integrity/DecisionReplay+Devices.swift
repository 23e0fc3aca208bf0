extension DecisionReplay {
    /// Folds a device event — link, revocation, key rotation — into the devices in force
    /// and, when judging, checks it as the engine would have (Specs/integrity.md, "Decision
    /// replay": `device.link`, `device.revoke`, `device.rotate`).
    mutating func applyDevice(_ event: Event, reader: LogReader, judge: Bool,
                              _ fail: (String, String, LedgerError.Code?) -> Mismatch) throws {
        // Only a revocation is made from a device (the person's own); links, rotations and
        // recovery keys are recorded by the operator, their signatures in the payload.
        if judge, event.device != nil, event.type != .deviceRevoked {
            throw fail("device.event", "a \(event.type.name) names a device (\(event.device!)); the engine records none", nil)
        }
        switch event.payload {
        case .deviceLinked(let d):
            if judge {
                if devices[d.device] != nil { throw fail("device.link", "device \(d.device) was already linked", .duplicateDevice) }
                for (what, id) in [("device", d.device), ("person", event.person), ("org", event.org)] {
                    if let problem = FieldReader.identifierProblem(id) { throw fail("device.link", "\(what) \(problem)", .invalidInput) }
                }
            }
            if judge, let key = d.key {
                // Who may vouch for a key (statements.md §1.1), with the devices as they stood.
                let keyed = devices.values.filter { $0.person == event.person && $0.key != nil }
                do {
                    try DeviceLinking.checkKey(d, org: event.org, person: event.person, keyed: Array(keyed),
                                               introducer: key.introducer.flatMap { devices[$0] },
                                               recovery: recoveryKeys[event.person], storeId: try reader.storeId())
                } catch let e as LedgerError { throw fail("device.link", e.message, e.code) }
            }
            if personOrgs[event.person] == nil { personOrgs[event.person] = event.org }
            devices[d.device] = DeviceState(device: d.device, person: event.person, org: event.org, label: d.label,
                                            platform: d.platform, linkedAt: event.at, revokedAt: nil, key: d.key, keySeq: event.seq)
        case .deviceRevoked(let d):
            guard var state = devices[d.device] else {
                throw fail("device.revoke", "device \(d.device) was never linked", .unknownDevice)
            }
            if judge {
                if state.revokedAt != nil { throw fail("device.revoke", "device \(d.device) was already revoked", .deviceRevoked) }
                if event.person != state.person || event.org != state.org {
                    throw fail("device.revoke", "the revocation names \(event.person)/\(event.org), the device is "
                        + "\(state.person)/\(state.org)", nil)
                }
                // Made from one of her devices: as the engine checks it, with the devices as they stood.
                if let by = event.device {
                    do {
                        try DeviceLinking.checkRevoker(by, devices[by], of: state, actor: event.actor, proof: d.proof,
                                                       required: false, storeId: try reader.storeId())
                    } catch let e as LedgerError {
                        throw fail("device.revoke", e.message, e.code)
                    }
                } else if d.proof != nil {
                    throw fail("device.revoke", "the operator's revocation of \(d.device) carries a device's signature", .badProof)
                }
            }
            state.revokedAt = event.at
            devices[d.device] = state
        case .deviceKeyRotated(let k):
            if judge {
                guard let state = devices[k.device], event.person == state.person, event.org == state.org else {
                    throw fail("device.rotate", "the rotation names \(event.person)/\(event.org), not device \(k.device)'s person",
                               .unknownDevice)
                }
                // The signature is checked against the signer's key in force here (statements.md §3.1).
                do {
                    try DeviceRotation.check(recorded: k, in: event, devices: { devices[$0] }, storeId: try reader.storeId())
                } catch let e as LedgerError {
                    throw fail("device.rotate", e.message, e.code)
                }
            }
            devices[k.device]?.apply(k, seq: event.seq)
        case .recoveryKeySet(let s):
            if judge {
                if let bound = personOrgs[event.person], bound != event.org {
                    throw fail("person.one_org", "a recovery key for \(event.person) under \(event.org); she belongs to \(bound)", .orgMismatch)
                }
                // Who may vouch for a recovery key (statements.md §1.2), with the devices as they stood.
                do {
                    try RecoveryKeys.check(recorded: s, in: event, current: recoveryKeys[event.person], devices: { devices[$0] },
                                           previous: previous, storeId: try reader.storeId())
                } catch let e as LedgerError { throw fail("recovery.key", e.message, e.code) }
            }
            recoveryKeys[event.person] = RecoveryKeys.InForce(set: s, org: event.org, seq: event.seq)
        default:
            break
        }
    }
}
