/// `tap.refused` (event code 50): a tap, dismissal, edit or hold refused although its proof
/// verifies — the one kind of refusal that writes, because it is authenticated
/// (Specs/policy.md §7, Specs/statements.md §2.3). Its command id is registered to it: the proof is spent.
public struct TapRefusal: Sendable, Equatable {
    /// The step the device signed.
    public var step: Statement.Step
    /// The refusal's code (`device_revoked`, `already_decided`, `proof_required`, …).
    public var code: String
    /// The exact statement the device signed (Specs/statements.md §2).
    public var statement: [UInt8]
    /// The device's proof, as a signed tap records it.
    public var proof: SignedProof

    public init(step: Statement.Step, code: String, statement: [UInt8], proof: SignedProof) {
        self.step = step
        self.code = code
        self.statement = statement
        self.proof = proof
    }

    /// Longest statement recorded (nine or ten lines of ids ≤ 128 bytes, hex and times).
    static let maxStatement = 1024

    func encode(_ w: inout BinaryWriter) {
        w.u8(UInt8(Statement.Step.allCases.firstIndex(of: step)!))
        w.string(code)
        w.varint(UInt64(statement.count))
        w.bytes.append(contentsOf: statement)
        proof.encode(&w)
    }

    static func decode(_ r: inout BinaryReader) throws -> TapRefusal {
        let stepCode = Int(try r.u8())
        guard stepCode < Statement.Step.allCases.count else { throw r.fail("invalid step") }
        let code = try r.string()
        let n = try r.varint()
        guard n <= UInt64(maxStatement) else { throw r.fail("statement too long") }
        return TapRefusal(step: Statement.Step.allCases[stepCode], code: code, statement: try r.raw(Int(n)),
                          proof: try SignedProof.decode(&r))
    }

    var json: JSON {
        ["step": .string(step.rawValue), "code": .string(code), "statement": .string(Hex.encode(statement)), "proof": proof.json]
    }

    init(fields r: inout FieldReader) throws {
        let stepName = try r.string("step", max: 16)
        guard let step = Statement.Step(rawValue: stepName) else { throw r.fail("step", "expected review, confirm, approve, dismiss, edit or hold") }
        let code = try r.string("code", max: 64)
        guard let c = LedgerError.Code.all.first(where: { $0.rawValue == code }), RefusalRecorder.recorded.contains(c) else {
            throw r.fail("code", "is not a refusal tap.refused records")
        }
        guard let statement = Hex.decode(try r.string("statement", max: 2 * Self.maxStatement)), !statement.isEmpty else {
            throw r.fail("statement", "expected lowercase hex of at most \(Self.maxStatement) bytes")
        }
        self.init(step: step, code: code, statement: statement, proof: try SignedProof(fields: try r.object("proof")))
    }
}
