/// The policy's proof table in `policy.set` schema 2 (Specs/events.md "Versioning",
/// Specs/policy.md §2a): JSON `{"medium": {"review": "signed", …}, …}`, and in the
/// canonical bytes a count and `(stakes, step, requirement)` bytes in canonical order.
extension ProofRequirements {
    var json: JSON {
        var o = JSONObject()
        for stakes in Stakes.allCases {
            let steps = entries.filter { $0.stakes == stakes }
            if steps.isEmpty { continue }
            o[stakes.rawValue] = .object(JSONObject(steps.map { ($0.step.rawValue, JSON.string($0.requirement.rawValue)) }))
        }
        return .object(o)
    }

    /// Reads the table; a step given as `none` is the same as a step left out.
    init(fields: FieldReader) throws {
        var r = fields
        self.init()
        for stakes in Stakes.allCases {
            guard var s = try r.optionalObject(stakes.rawValue) else { continue }
            for step in Statement.Step.allCases {
                guard let text = try s.optionalString(step.rawValue, max: 16) else { continue }
                guard let requirement = ProofRequirement(rawValue: text) else {
                    throw s.fail(step.rawValue, "expected none, signed or signed_uv")
                }
                self[stakes, step] = requirement
            }
            try s.finish()
        }
        try r.finish()
    }

    func encode(_ w: inout BinaryWriter) {
        let all = entries
        w.varint(UInt64(all.count))
        for e in all {
            EventCodec.writeStakes(e.stakes, &w)
            w.u8(UInt8(Statement.Step.allCases.firstIndex(of: e.step)!))
            w.u8(e.requirement.code)
        }
    }

    /// Refuses anything but what ``encode(_:)`` writes: entries above `none`, each once,
    /// in canonical order.
    static func decode(_ r: inout BinaryReader) throws -> ProofRequirements {
        let n = try r.varint()
        guard n <= UInt64(Stakes.allCases.count * Statement.Step.allCases.count) else { throw r.fail("too many proof requirements") }
        var out = ProofRequirements(), order: [(Stakes, Statement.Step)] = []
        for _ in 0..<n {
            let stakes = try EventCodec.readStakes(&r)
            let stepCode = Int(try r.u8())
            guard stepCode < Statement.Step.allCases.count else { throw r.fail("invalid proof step") }
            let step = Statement.Step.allCases[stepCode]
            let code = try r.u8()
            guard let requirement = ProofRequirement.allCases.first(where: { $0.code == code }),
                  requirement != .none else { throw r.fail("invalid proof requirement") }
            out[stakes, step] = requirement
            order.append((stakes, step))
        }
        guard order.elementsEqual(out.entries.map { ($0.stakes, $0.step) }, by: { $0 == $1 }) else {
            throw r.fail("proof requirements out of canonical order")
        }
        return out
    }
}
