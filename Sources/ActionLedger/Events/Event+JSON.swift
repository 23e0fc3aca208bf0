extension Event {
    /// The JSON form: envelope fields at the top level, the event's own fields under `data`.
    /// With `hash`, the chain hash is added as `"hash"` (log, export).
    public func json(hash: Digest? = nil) -> JSON {
        var o: JSONObject = [
            "seq": .number(Double(seq)),
            "type": .string(type.name),
            "schema_version": .number(Double(schemaVersion)),
            "at": .string(at.iso8601),
            "actor": .string(actor),
            "device": device.map(JSON.string) ?? .null,
            "command_id": .string(commandId),
            "org": .string(org),
            "person": .string(person),
        ]
        if let actionId { o["action_id"] = .string(actionId) }
        o["data"] = payload.json
        if let hash { o["hash"] = .string(hash.hex) }
        return .object(o)
    }

    /// Reads the JSON form back (import, export verification). Strict: every field is
    /// checked and unknown ones are refused, so an accepted line re-encodes to exactly the
    /// canonical bytes it was exported from.
    public init(json: JSON) throws {
        var r = try FieldReader(json)
        let seq = try r.integer("seq", in: 1...Int(Int64.max / 2))
        let typeName = try r.string("type", max: 64)
        guard let type = EventType(name: typeName) else { throw r.fail("type", "unknown event type \"\(typeName)\"") }
        let version = try r.integer("schema_version", in: 0...255)
        guard (1...Int(type.schemaVersion)).contains(version) else {
            throw r.fail("schema_version", "unsupported version \(version) of \(typeName) (this build reads 1…\(type.schemaVersion))")
        }
        let at = try r.timestamp("at")
        // As every append requires (TimeRules): an export is checked as strictly as the log.
        guard at >= TimeRules.earliest, at < TimeRules.latest else { throw r.fail("at", "\(at.iso8601) is outside 2000…2100") }
        // Ids are read as strictly as new input (Specs/events.md, Identifier); only the
        // actor may carry a specialist's display name (`specialist:<name>`), of up to a
        // name's 256 bytes: a proposal's actor is its specialist's name, whatever its length.
        let actor = try r.string("actor", max: Event.longestActor)
        // Only a proposal's actor is its specialist's name; every other is held to an id's 128.
        if type != .actionProposed || !actor.hasPrefix(Event.specialistPrefix), actor.utf8.count > FieldReader.Limit.id {
            throw r.fail("actor", "is \(actor.utf8.count) bytes; the limit is \(FieldReader.Limit.id) (but for a proposal's specialist:<name>)")
        }
        let device = try r.optionalIdentifier("device")
        let commandId = try r.identifier("command_id")
        let org = try r.identifier("org")
        let person = try r.identifier("person")
        let actionId = try r.optionalString("action_id", max: FieldReader.Limit.id)
        // The per-action index is keyed by it: action events need one, others have none.
        if type.hasActionId != (actionId != nil) {
            throw r.fail("action_id", actionId == nil ? "is required for \(typeName)" : "is not allowed for \(typeName)")
        }
        if let actionId, let bad = FieldReader.identifierProblem(actionId) { throw r.fail("action_id", bad) }
        var data = try r.object("data")
        let payload = try Payload(type: type, version: UInt8(version), data: &data)
        try data.finish()
        _ = r.raw("hash")  // checked by the verifier, not part of the event
        try r.finish()
        self.init(seq: UInt64(seq), at: at, actor: actor, device: device, commandId: commandId, org: org,
                  person: person, actionId: actionId, payload: payload)
    }
}

extension Payload {
    /// The `data` object of the JSON form.
    public var json: JSON {
        switch self {
        case .proposed(let p):
            var o: JSONObject = [
                "specialist": ["name": .string(p.specialist.name), "agent": .string(p.specialist.agent)],
                "surface": .string(p.surface), "kind": .string(p.kind),
                "target": ["type": .string(p.target.type), "id": .string(p.target.id)],
                "stakes": .string(p.stakes.rawValue), "confidence": .number(p.confidence),
                "preview": p.preview.json, "rationale": .string(p.rationale),
            ]
            if let s = p.scheduledFor { o["scheduled_for"] = .string(s.iso8601) }
            if let e = p.expiresAt { o["expires_at"] = .string(e.iso8601) }
            o["content_hash"] = .string(p.contentHash.hex)
            if let pin = p.pinned, pin.rulesVersion >= 2 {
                o["rules_version"] = .number(Double(pin.rulesVersion))
                o["pinned_stakes"] = .string(pin.stakes.rawValue)
                o["pinned_user_verification"] = .bool(pin.userVerification)
            }
            return .object(o)
        case .reviewed(let t), .confirmed(let t):
            return Self.withRules(["content_hash": .string(t.contentHash.hex), "policy_version": .number(Double(t.policyVersion))],
                                  t.rulesVersion, t.proof)
        case .approved(let a):
            return Self.withRules(["content_hash": .string(a.contentHash.hex), "policy_version": .number(Double(a.policyVersion)),
                                   "rule": .string(a.rule), "stakes": .string(a.stakes.rawValue),
                                   "user_verified": .bool(a.userVerified)], a.rulesVersion, a.proof)
        case .autoShipped(let a):
            return Self.withRules(["content_hash": .string(a.contentHash.hex), "policy_version": .number(Double(a.policyVersion)),
                                   "rule": .string(a.rule), "confidence": .number(a.confidence)], a.rulesVersion)
        case .dismissed(let d):
            return Self.withRules(["reason": .string(d.reason), "policy_version": .number(Double(d.policyVersion))],
                                  d.rulesVersion, d.proof)
        case .held(let h):
            return Self.withRules(["until": .string(h.until.iso8601)], 1, h.proof)
        case .edited(let e):
            return Self.withRules(["preview": e.preview.json, "content_hash": .string(e.contentHash.hex)], 1, e.proof)
        case .executed(let o), .failed(let o):
            return ["outcome": (try? JSONParser.parse(o.outcome)) ?? .string(o.outcome)]
        case .expired:
            return .object(JSONObject())
        case .deviceLinked(let d):
            var o: JSONObject = ["device": .string(d.device), "label": .string(d.label), "platform": .string(d.platform.rawValue)]
            if let key = d.key { o["key"] = key.json }
            return .object(o)
        case .deviceRevoked(let d):
            var o: JSONObject = ["device": .string(d.device), "reason": .string(d.reason)]
            if let proof = d.proof { o["proof"] = proof.json }
            return .object(o)
        case .deviceKeyRotated(let k):
            return ["device": .string(k.device), "previous_key_fingerprint": .string(k.previousFingerprint.hex), "key": k.key.json]
        case .recoveryKeySet(let s):
            return s.json
        case .policySet(let p):
            return p.json
        case .storeCreated(let c):
            return ["test_clock": .bool(c.testClock), "demo": .bool(c.demo)]
        case .tapRefused(let t):
            return t.json
        case .relyingParty(let rp):
            return ["rp_id": .string(rp.rpId), "origins": .array(rp.origins.map(JSON.string))]
        case .tokenIssued(let t):
            return Self.tokenJSON(t)
        case .tokenRevoked(let t):
            return ["token_id": .string(t.tokenId), "reason": .string(t.reason)]
        }
    }

    /// `data` plus `rules_version` when a decision records one (schema 2), and `proof` when
    /// a device signed it.
    static func withRules(_ o: JSONObject, _ rules: UInt32, _ proof: SignedProof? = nil) -> JSON {
        var o = o
        if rules >= 2 { o["rules_version"] = .number(Double(rules)) }
        if let proof { o["proof"] = proof.json }
        return .object(o)
    }

    /// `proof`: required in the signed schema (`signed`), absent before it.
    static func proof(_ signed: Bool, _ r: inout FieldReader) throws -> SignedProof? {
        guard signed else { return nil }
        return try SignedProof(fields: try r.object("proof"))
    }

    /// `rules_version`: required in schema 2 (2 or more), absent in schema 1 (1).
    static func rules(_ version: UInt8, _ r: inout FieldReader) throws -> UInt32 {
        guard version >= 2 else { return 1 }
        return UInt32(try r.integer("rules_version", in: 2...Int(UInt32.max)))
    }

    init(type: EventType, version: UInt8, data r: inout FieldReader) throws {
        typealias L = FieldReader.Limit
        switch type {
        case .actionProposed:
            var p = try Proposal(fields: &r)
            p.contentHash = try r.digest("content_hash")
            if version >= 2 {
                p.pinned = PinnedRequirements(rulesVersion: try Payload.rules(version, &r), stakes: try r.stakes("pinned_stakes"),
                                              userVerification: try r.bool("pinned_user_verification"))
            }
            self = .proposed(p)
        case .actionReviewed, .actionConfirmed:
            let t = Tap(contentHash: try r.digest("content_hash"), policyVersion: try Payload.version(&r),
                        rulesVersion: try Payload.rules(version, &r), proof: try Payload.proof(version >= 3, &r))
            self = type == .actionReviewed ? .reviewed(t) : .confirmed(t)
        case .actionApproved:
            self = .approved(Approval(contentHash: try r.digest("content_hash"), policyVersion: try Payload.version(&r),
                                      rule: try r.string("rule", max: L.name), stakes: try r.stakes("stakes"),
                                      userVerified: try r.optionalBool("user_verified") ?? false,
                                      rulesVersion: try Payload.rules(version, &r), proof: try Payload.proof(version >= 3, &r)))
        case .actionAutoShipped:
            self = .autoShipped(AutoShip(contentHash: try r.digest("content_hash"), policyVersion: try Payload.version(&r),
                                         rule: try r.string("rule", max: L.name), confidence: try r.number("confidence"),
                                         rulesVersion: try Payload.rules(version, &r)))
        case .actionDismissed:
            self = .dismissed(Dismissal(reason: try r.string("reason", max: L.rationale, allowEmpty: true),
                                        policyVersion: try Payload.version(&r), rulesVersion: try Payload.rules(version, &r),
                                        proof: try Payload.proof(version >= 3, &r)))
        case .actionHeld:
            self = .held(Hold(until: try r.timestamp("until"), proof: try Payload.proof(version >= 2, &r)))
        case .actionEdited:
            var e = Edit(preview: try Preview(fields: try r.object("preview")))
            e.contentHash = try r.digest("content_hash")
            e.proof = try Payload.proof(version >= 2, &r)
            self = .edited(e)
        case .actionExecuted, .actionFailed:
            let o = Outcome(outcome: try r.require("outcome").serialized())
            self = type == .actionExecuted ? .executed(o) : .failed(o)
        case .actionExpired:
            self = .expired
        case .deviceLinked:
            let device = try r.identifier("device"), label = try r.string("label", max: L.name)
            let platform = try r.string("platform", max: 16)
            guard let p = Platform(rawValue: platform) else { throw r.fail("platform", "expected ios, web or cli") }
            let key = version >= 2 ? try DeviceKey(fields: try r.object("key")) : nil
            if let key, key.isRecovered != (version == 3) {
                throw r.fail("key.trust", version == 3 ? "schema 3 is a key linked by recovery" : "recovery is schema 3 of device.linked")
            }
            self = .deviceLinked(DeviceLink(device: device, label: label, platform: p, key: key))
        case .deviceRevoked:
            self = .deviceRevoked(DeviceRevocation(device: try r.identifier("device"),
                                                   reason: try r.string("reason", max: L.rationale, allowEmpty: true),
                                                   proof: version >= 2 ? try RevocationProof(fields: try r.object("proof")) : nil))
        case .deviceKeyRotated:
            let rotation = KeyRotation(device: try r.identifier("device"), previousFingerprint: try r.digest("previous_key_fingerprint"),
                                       key: try DeviceKey(fields: try r.object("key")))
            guard rotation.key.introducer != nil else { throw r.fail("key.trust", "a rotated key is introduced, never first_use") }
            self = .deviceKeyRotated(rotation)
        case .personRecoveryKeySet:
            self = .recoveryKeySet(try RecoveryKeySet(fields: &r))
        case .policySet:
            let p = try PolicyDocument(fields: &r, requireVersion: true)
            // Schema 2 is the document with proof requirements, schema 1 the one without.
            guard p.proofs.isEmpty == (version < 2) else {
                throw r.fail("proofs", version < 2 ? "is schema 2 of policy.set" : "is required (non-empty) in schema 2")
            }
            self = .policySet(p)
        case .storeCreated:
            self = .storeCreated(StoreCreation(testClock: try r.bool("test_clock"), demo: try r.bool("demo")))
        case .tapRefused:
            self = .tapRefused(try TapRefusal(fields: &r))
        case .storeRelyingParty:
            let rpId = try r.string("rp_id", max: 253)
            let origins = try r.array("origins", max: 16).map { o -> String in
                guard case .string(let s) = o else { throw r.fail("origins", "expected strings") }
                return s
            }
            self = .relyingParty(try RelyingParty(rpId: rpId, origins: origins))
        case .tokenIssued:
            self = .tokenIssued(try Payload.token(&r))
        case .tokenRevoked:
            self = .tokenRevoked(TokenRevocation(tokenId: try r.identifier("token_id"),
                                                 reason: try r.string("reason", max: L.rationale, allowEmpty: true)))
        }
    }

    static func version(_ r: inout FieldReader) throws -> UInt32 {
        UInt32(try r.integer("policy_version", in: 0...Int(UInt32.max)))
    }
}

extension Preview {
    public var json: JSON {
        var o: JSONObject = ["text": .string(text), "assets": .number(Double(assets))]
        if let price { o["price"] = .number(price) }
        return .object(o)
    }

    init(fields: FieldReader) throws {
        var r = fields
        text = try r.string("text", max: FieldReader.Limit.text, allowEmpty: true)
        // Absent or null (null counts as absent, events.md): none.
        assets = r.raw("assets") == nil ? 0 : try r.integer("assets", in: 0...1000)
        price = try r.optionalNumber("price")
        if let price, price < 0 || price > 1_000_000 { throw r.fail("price", "must be within 0…1000000") }
        try r.finish()
    }
}
