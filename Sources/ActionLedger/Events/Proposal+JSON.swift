extension Proposal {
    /// Reads the proposal fields shared by `ledger propose` input and the event's `data`.
    init(fields r: inout FieldReader) throws {
        typealias L = FieldReader.Limit
        var s = try r.object("specialist")
        // The name is for display (escaped when printed); the agent is an id.
        let specialist = Specialist(name: try s.string("name", max: L.name), agent: try s.identifier("agent"))
        try s.finish()
        let surface = try r.identifier("surface"), kind = try r.identifier("kind")
        var t = try r.object("target")
        let target = Target(type: try t.identifier("type"), id: try t.string("id", max: L.name))
        try t.finish()
        let stakes = try r.stakes("stakes")
        let confidence = try r.number("confidence")
        guard (0...1).contains(confidence) else { throw r.fail("confidence", "must be within 0…1, got \(confidence)") }
        let preview = try Preview(fields: try r.object("preview"))
        let rationale = try r.string("rationale", max: L.rationale, allowEmpty: true)
        self.init(specialist: specialist, surface: surface, kind: kind, target: target, stakes: stakes,
                  confidence: confidence, preview: preview, rationale: rationale,
                  scheduledFor: try r.optionalTimestamp("scheduled_for"), expiresAt: try r.optionalTimestamp("expires_at"))
    }
}

/// One proposal as given to `ledger propose`: the action's identity plus its proposal.
public struct ProposalInput: Sendable, Equatable {
    public var actionId: String
    public var org: String
    public var person: String
    public var proposal: Proposal
    /// Optional idempotency key; generated when absent.
    public var commandId: String?

    public init(actionId: String, org: String, person: String, proposal: Proposal, commandId: String? = nil) {
        self.actionId = actionId
        self.org = org
        self.person = person
        self.proposal = proposal
        self.commandId = commandId
    }

    /// Parses and validates one proposal object; errors name the offending field.
    public init(json: JSON) throws {
        var r = try FieldReader(json)
        actionId = try r.identifier("action_id")
        org = try r.identifier("org")
        person = try r.identifier("person")
        commandId = try r.optionalIdentifier("command_id")
        proposal = try Proposal(fields: &r)
        try r.finish()
        // One zero in what the engine records from now on: a -0.0 given is stored as 0.
        if proposal.confidence == 0 { proposal.confidence = 0 }
        if proposal.preview.price == 0 {
            proposal.preview.price = 0
            proposal.contentHash = EventCodec.contentHash(of: proposal.preview)
        }
    }
}

extension PolicyDocument {
    /// The JSON form (`ledger policy show`, `policy.set` data).
    public var json: JSON {
        var o: JSONObject = [
            "version": .number(Double(version)),
            "auto_ship": ["enabled": .bool(autoShip.enabled), "confidence_floor": .number(autoShip.confidenceFloor),
                          "daily_cap": .number(Double(autoShip.dailyCap))],
            "user_verification": .array(userVerification.map { .string($0.rawValue) }),
            "raise": .array(raise.map { rule in
                var o = JSONObject()
                if let k = rule.kind { o["kind"] = .string(k) }
                if let s = rule.surface { o["surface"] = .string(s) }
                o["stakes"] = .string(rule.stakes.rawValue)
                return .object(o)
            }),
        ]
        // Only schema 2 has the table: a document without requirements keeps schema 1's form.
        if !proofs.isEmpty { o["proofs"] = proofs.json }
        return .object(o)
    }

    /// Parses a policy document. Omitted settings take the built-in defaults; `version`
    /// may be omitted in `ledger policy set` input (the engine assigns the next one).
    init(fields r: inout FieldReader, requireVersion: Bool) throws {
        // Given in `policy set` input, it must be a real next version: 0 is the built-in
        // default, and taking it for "the next one" would pass a stale document silently.
        let v = requireVersion ? try r.integer("version", in: 0...Int(UInt32.max))
            : r.object["version"] != nil ? try r.integer("version", in: 1...Int(UInt32.max)) : 0
        var settings = AutoShipSettings()
        if var a = try r.optionalObject("auto_ship") {
            settings.enabled = try a.optionalBool("enabled") ?? settings.enabled
            if let f = try a.optionalNumber("confidence_floor") {
                guard (0...1).contains(f) else { throw a.fail("confidence_floor", "must be within 0…1") }
                settings.confidenceFloor = f
            }
            if a.object["daily_cap"] != nil { settings.dailyCap = try a.integer("daily_cap", in: 0...1_000_000) }
            try a.finish()
        }
        var uv: [Stakes] = []
        if r.object["user_verification"] == nil {
            uv = [.high]
        } else {
            for (i, item) in try r.array("user_verification", max: 3).enumerated() {
                guard case .string(let s) = item, let st = Stakes(rawValue: s), !uv.contains(st) else {
                    throw r.fail("user_verification[\(i)]", "expected distinct stakes: low, medium or high")
                }
                uv.append(st)
            }
        }
        var raise: [StakesRaise] = []
        for (i, item) in try r.array("raise", max: 1000).enumerated() {
            var rr = try FieldReader(item, path: r.name("raise[\(i)]"))
            let rule = StakesRaise(kind: try rr.optionalString("kind", max: FieldReader.Limit.id),
                                   surface: try rr.optionalString("surface", max: FieldReader.Limit.id),
                                   stakes: try rr.stakes("stakes"))
            try rr.finish()
            raise.append(rule)
        }
        let proofs = try r.optionalObject("proofs").map { try ProofRequirements(fields: $0) } ?? ProofRequirements()
        self.init(version: UInt32(v), autoShip: settings, userVerification: uv, raise: raise, proofs: proofs)
    }

    /// Parses `ledger policy set` input.
    public init(json: JSON) throws {
        var r = try FieldReader(json)
        try self.init(fields: &r, requireVersion: false)
        try r.finish()
        if autoShip.confidenceFloor == 0 { autoShip.confidenceFloor = 0 }  // one zero, as for proposals
    }
}
