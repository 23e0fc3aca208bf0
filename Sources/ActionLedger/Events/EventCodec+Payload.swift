extension EventCodec {
    static func encodePayload(_ payload: Payload, into w: inout BinaryWriter) {
        switch payload {
        case .proposed(let p):
            w.string(p.specialist.name)
            w.string(p.specialist.agent)
            w.string(p.surface)
            w.string(p.kind)
            w.string(p.target.type)
            w.string(p.target.id)
            writeStakes(p.stakes, &w)
            w.double(p.confidence)
            writePreview(p.preview, &w)
            w.string(p.rationale)
            w.optional(p.scheduledFor) { $0.timestamp($1) }
            w.optional(p.expiresAt) { $0.timestamp($1) }
            w.digest(p.contentHash)
            if let pin = p.pinned, pin.rulesVersion >= 2 {
                w.varint(UInt64(pin.rulesVersion))
                writeStakes(pin.stakes, &w)
                w.bool(pin.userVerification)
            }
        case .reviewed(let t), .confirmed(let t):
            w.digest(t.contentHash)
            w.varint(UInt64(t.policyVersion))
            writeRules(t.rulesVersion, &w)
            t.proof?.encode(&w)
        case .approved(let a):
            w.digest(a.contentHash)
            w.varint(UInt64(a.policyVersion))
            w.string(a.rule)
            writeStakes(a.stakes, &w)
            w.bool(a.userVerified)
            writeRules(a.rulesVersion, &w)
            a.proof?.encode(&w)
        case .autoShipped(let a):
            w.digest(a.contentHash)
            w.varint(UInt64(a.policyVersion))
            w.string(a.rule)
            w.double(a.confidence)
            writeRules(a.rulesVersion, &w)
        case .dismissed(let d):
            w.string(d.reason)
            w.varint(UInt64(d.policyVersion))
            writeRules(d.rulesVersion, &w)
            d.proof?.encode(&w)
        case .held(let h):
            w.timestamp(h.until)
            h.proof?.encode(&w)
        case .edited(let e):
            writePreview(e.preview, &w)
            w.digest(e.contentHash)
            e.proof?.encode(&w)
        case .executed(let o), .failed(let o):
            w.string(o.outcome)
        case .expired:
            break
        case .deviceLinked(let d):
            w.string(d.device)
            w.string(d.label)
            w.string(d.platform.rawValue)
            d.key?.encode(&w)
        case .deviceRevoked(let d):
            w.string(d.device)
            w.string(d.reason)
            d.proof?.encode(&w)  // schema 2
        case .deviceKeyRotated(let k):
            w.string(k.device)
            w.digest(k.previousFingerprint)
            k.key.encode(&w)
        case .recoveryKeySet(let s):
            s.encode(&w)
        case .policySet(let p):
            writePolicy(p, &w)
            // Schema 2: the proof table; schema 1 (no requirements) ends here.
            if !p.proofs.isEmpty { p.proofs.encode(&w) }
        case .storeCreated(let c):
            w.bool(c.testClock)
            w.bool(c.demo)
        case .tapRefused(let t):
            t.encode(&w)
        case .relyingParty(let rp):
            w.string(rp.rpId)
            w.varint(UInt64(rp.origins.count))
            for o in rp.origins { w.string(o) }
        case .tokenIssued(let t):
            encodeToken(t, &w)
        case .tokenRevoked(let t):
            w.string(t.tokenId)
            w.string(t.reason)
        }
    }

    /// Schema 2 of a decision appends its rules version (2 or more); schema 1 has none (1).
    static func writeRules(_ v: UInt32, _ w: inout BinaryWriter) {
        if v >= 2 { w.varint(UInt64(v)) }
    }

    static func readRules(_ version: UInt8, _ r: inout BinaryReader) throws -> UInt32 {
        guard version >= 2 else { return 1 }
        let v = try readVersion(&r)
        // Canonical: rules version 1 is written as schema 1, never as schema 2.
        guard v >= 2 else { throw r.fail("rules version \(v) in schema 2 (rules version 1 is schema 1)") }
        return v
    }

    static func decodePayload(_ type: EventType, version: UInt8, _ r: inout BinaryReader) throws -> Payload {
        switch type {
        case .actionProposed:
            let specialist = Specialist(name: try r.string(), agent: try r.string())
            let surface = try r.string(), kind = try r.string()
            let target = Target(type: try r.string(), id: try r.string())
            let stakes = try readStakes(&r)
            let confidence = try r.double()
            let preview = try readPreview(&r)
            let rationale = try r.string()
            let scheduledFor = try r.optional { try $0.timestamp() }
            let expiresAt = try r.optional { try $0.timestamp() }
            // The stored hash is kept as recorded: verification, not decoding, judges it.
            var p = Proposal(specialist: specialist, surface: surface, kind: kind, target: target, stakes: stakes,
                             confidence: confidence, preview: preview, rationale: rationale,
                             scheduledFor: scheduledFor, expiresAt: expiresAt, storedContentHash: try r.digest())
            if version >= 2 {
                p.pinned = PinnedRequirements(rulesVersion: try readRules(version, &r), stakes: try readStakes(&r),
                                              userVerification: try r.bool())
            }
            return .proposed(p)
        case .actionReviewed, .actionConfirmed:
            let t = Tap(contentHash: try r.digest(), policyVersion: try readVersion(&r), rulesVersion: try readRules(version, &r),
                        proof: version >= 3 ? try SignedProof.decode(&r) : nil)
            return type == .actionReviewed ? .reviewed(t) : .confirmed(t)
        case .actionApproved:
            return .approved(Approval(contentHash: try r.digest(), policyVersion: try readVersion(&r),
                                      rule: try r.string(), stakes: try readStakes(&r), userVerified: try r.bool(),
                                      rulesVersion: try readRules(version, &r),
                                      proof: version >= 3 ? try SignedProof.decode(&r) : nil))
        case .actionAutoShipped:
            return .autoShipped(AutoShip(contentHash: try r.digest(), policyVersion: try readVersion(&r),
                                         rule: try r.string(), confidence: try r.double(),
                                         rulesVersion: try readRules(version, &r)))
        case .actionDismissed:
            return .dismissed(Dismissal(reason: try r.string(), policyVersion: try readVersion(&r),
                                        rulesVersion: try readRules(version, &r),
                                        proof: version >= 3 ? try SignedProof.decode(&r) : nil))
        case .actionHeld:
            return .held(Hold(until: try r.timestamp(), proof: version >= 2 ? try SignedProof.decode(&r) : nil))
        case .actionEdited:
            let preview = try readPreview(&r)
            var e = Edit(preview: preview, storedContentHash: try r.digest())
            e.proof = version >= 2 ? try SignedProof.decode(&r) : nil
            return .edited(e)
        case .actionExecuted:
            return .executed(Outcome(outcome: try r.string()))
        case .actionFailed:
            return .failed(Outcome(outcome: try r.string()))
        case .actionExpired:
            return .expired
        case .deviceLinked:
            let device = try r.string(), label = try r.string(), platform = try r.string()
            guard let p = Platform(rawValue: platform) else { throw r.fail("unknown platform \(platform)") }
            let key = version >= 2 ? try DeviceKey.decode(&r) : nil
            // One encoding per event: schema 3 is exactly the key linked by recovery.
            if let key, key.isRecovered != (version == 3) { throw r.fail("trust recovery is schema 3 of device.linked, and only it") }
            return .deviceLinked(DeviceLink(device: device, label: label, platform: p, key: key))
        case .deviceRevoked:
            return .deviceRevoked(DeviceRevocation(device: try r.string(), reason: try r.string(),
                                                   proof: version >= 2 ? try RevocationProof.decode(&r) : nil))
        case .deviceKeyRotated:
            let rotation = KeyRotation(device: try r.string(), previousFingerprint: try r.digest(), key: try DeviceKey.decode(&r))
            guard rotation.key.introducer != nil else { throw r.fail("a rotated key must be vouched for (trust introduced)") }
            return .deviceKeyRotated(rotation)
        case .personRecoveryKeySet:
            return .recoveryKeySet(try RecoveryKeySet.decode(&r))
        case .policySet:
            var p = try readPolicy(&r)
            if version >= 2 {
                p.proofs = try ProofRequirements.decode(&r)
                // Canonical: a document without requirements is written as schema 1.
                guard !p.proofs.isEmpty else { throw r.fail("an empty proof table in policy.set schema 2") }
            }
            return .policySet(p)
        case .storeCreated:
            return .storeCreated(StoreCreation(testClock: try r.bool(), demo: try r.bool()))
        case .tapRefused:
            return .tapRefused(try TapRefusal.decode(&r))
        case .storeRelyingParty:
            let rpId = try r.string()
            let n = try r.varint()
            guard n <= 16 else { throw r.fail("too many origins") }
            let origins = try (0..<n).map { _ in try r.string() }
            do { return .relyingParty(try RelyingParty(rpId: rpId, origins: origins)) } catch { throw r.fail("invalid relying party") }
        case .tokenIssued:
            return .tokenIssued(try decodeToken(&r))
        case .tokenRevoked:
            return .tokenRevoked(TokenRevocation(tokenId: try r.string(), reason: try r.string()))
        }
    }

    static func readVersion(_ r: inout BinaryReader) throws -> UInt32 {
        let v = try r.varint()
        guard v <= UInt64(UInt32.max) else { throw r.fail("policy version out of range") }
        return UInt32(v)
    }

    static func writePolicy(_ p: PolicyDocument, _ w: inout BinaryWriter) {
        w.varint(UInt64(p.version))
        w.bool(p.autoShip.enabled)
        w.double(p.autoShip.confidenceFloor)
        w.varint(UInt64(p.autoShip.dailyCap))
        w.varint(UInt64(p.userVerification.count))
        for s in p.userVerification { writeStakes(s, &w) }
        w.varint(UInt64(p.raise.count))
        for rule in p.raise {
            w.optional(rule.kind) { $0.string($1) }
            w.optional(rule.surface) { $0.string($1) }
            writeStakes(rule.stakes, &w)
        }
    }

    static func readPolicy(_ r: inout BinaryReader) throws -> PolicyDocument {
        let version = try readVersion(&r)
        let enabled = try r.bool()
        let floor = try r.double()
        let cap = try r.varint()
        guard cap <= 1_000_000 else { throw r.fail("daily cap out of range") }
        let uvCount = try r.varint()
        guard uvCount <= 3 else { throw r.fail("too many user-verification stakes") }
        var uv: [Stakes] = []
        for _ in 0..<uvCount { uv.append(try readStakes(&r)) }
        let raiseCount = try r.varint()
        guard raiseCount <= 1000 else { throw r.fail("too many raise rules") }
        var raise: [PolicyDocument.StakesRaise] = []
        for _ in 0..<raiseCount {
            raise.append(PolicyDocument.StakesRaise(kind: try r.optional { try $0.string() },
                                                    surface: try r.optional { try $0.string() },
                                                    stakes: try readStakes(&r)))
        }
        return PolicyDocument(version: version,
                              autoShip: .init(enabled: enabled, confidenceFloor: floor, dailyCap: Int(cap)),
                              userVerification: uv, raise: raise)
    }
}
