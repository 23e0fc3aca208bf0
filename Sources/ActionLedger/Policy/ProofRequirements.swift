/// What a step must be proven with (Specs/policy.md §2a, `proof.required`).
public enum ProofRequirement: String, Sendable, CaseIterable, Comparable {
    /// Anything goes: an unkeyed device's bare tap counts (the meaning of every policy
    /// written before requirements existed).
    case none
    /// A signature by the device's key over the step's statement.
    case signed
    /// A signature that proves user verification (level `signed_uv`).
    case signedUV = "signed_uv"

    var code: UInt8 { self == .none ? 0 : self == .signed ? 1 : 2 }

    public static func < (a: ProofRequirement, b: ProofRequirement) -> Bool { a.code < b.code }

    /// Whether a step proven at `level` meets this requirement. An assertion
    /// (`--user-verified` without a proof) meets only `none`.
    public func isMet(by level: ProofLevel) -> Bool {
        switch self {
        case .none: true
        case .signed: level == .signed || level == .signedUV
        case .signedUV: level == .signedUV
        }
    }
}

/// The policy's proof table: per effective stakes, what each step requires. Steps it does
/// not name require `none`, so an empty table is the meaning of every policy document
/// written before the table existed (old decisions replay unchanged).
public struct ProofRequirements: Sendable, Equatable {
    /// Requirements above `none` only, by stakes and step.
    public private(set) var table: [Stakes: [Statement.Step: ProofRequirement]] = [:]

    public init() {}

    /// A table from `(stakes, step, requirement)` entries; `none` entries are dropped.
    public init(_ entries: [(Stakes, Statement.Step, ProofRequirement)]) {
        for (stakes, step, requirement) in entries { self[stakes, step] = requirement }
    }

    public subscript(stakes: Stakes, step: Statement.Step) -> ProofRequirement {
        get { table[stakes]?[step] ?? .none }
        set {
            table[stakes, default: [:]][step] = newValue == .none ? nil : newValue
            if table[stakes]?.isEmpty == true { table[stakes] = nil }
        }
    }

    public var isEmpty: Bool { table.isEmpty }

    /// The strict table of Specs/policies/strict.json (a test keeps them equal): `signed`
    /// for every medium and high step, `signed_uv` for the high approve.
    public static let strict = ProofRequirements(
        [Statement.Step.review, .approve, .dismiss, .edit, .hold].map { (Stakes.medium, $0, ProofRequirement.signed) }
            + [Statement.Step.review, .confirm, .dismiss, .edit, .hold].map { (Stakes.high, $0, ProofRequirement.signed) }
            + [(.high, .approve, .signedUV)])

    /// The entries above `none` in canonical order (stakes, then step, as declared): the
    /// order the event's bytes and JSON list them in.
    public var entries: [(stakes: Stakes, step: Statement.Step, requirement: ProofRequirement)] {
        Stakes.allCases.flatMap { stakes in
            Statement.Step.allCases.compactMap { step in
                let r = self[stakes, step]
                return r == .none ? nil : (stakes, step, r)
            }
        }
    }
}

extension ProofLevel {
    /// The level a tap or change is proven at: its proof's, else `asserted` when the
    /// client only said it verified the user, else `none`.
    public static func of(_ proof: SignedProof?, userVerified: Bool) -> ProofLevel {
        proof?.level ?? (userVerified ? .asserted : .none)
    }
}

extension Payload {
    /// The proof level a recorded tap, dismissal, edit or hold rests on, or the refused
    /// step's of a recorded refusal (always signed: only authenticated refusals are
    /// recorded); nil for other events.
    public var proofLevel: ProofLevel? {
        switch self {
        case .reviewed, .confirmed, .dismissed, .held, .edited: .of(proof, userVerified: false)
        case .approved(let a): .of(a.proof, userVerified: a.userVerified)
        case .tapRefused(let r): r.proof.level
        default: nil
        }
    }
}

extension PolicyDocument {
    /// The proof this policy requires of tap `step` at `stakes`.
    public func requiredProof(_ step: TapStep, at stakes: Stakes) -> ProofRequirement {
        proofs[stakes, Statement.Step(rawValue: step.rawValue)!]
    }
}

extension Policy {
    /// Refuses a step proven below what `policy` requires of it at `stakes`.
    /// - throws: `proof_required` naming the step, the stakes, the requirement and the level.
    static func requireProof(_ step: Statement.Step, at stakes: Stakes, level: ProofLevel, on state: ActionState,
                             policy: PolicyDocument, deviceId: String) throws {
        let required = policy.proofs[stakes, step]
        guard !required.isMet(by: level) else { return }
        let have = level == .none ? "unsigned" : level == .asserted ? "unsigned (user verification only asserted)"
            : "proven at level \(level.rawValue)"
        throw LedgerError(.proofRequired, "\(step.rawValue) of \(stakes.rawValue)-stakes action \(state.actionId) needs a "
            + "\(required.rawValue) proof under policy v\(policy.version); the one from device \(deviceId) is \(have)",
            details: ["device": .string(deviceId), "step": .string(step.rawValue), "stakes": .string(stakes.rawValue),
                      "required": .string(required.rawValue), "level": .string(level.rawValue)])
    }
}

extension Statement.Step {
    /// The signed step of a tap.
    public init(_ tap: TapStep) {
        switch tap {
        case .review: self = .review
        case .confirm: self = .confirm
        case .approve: self = .approve
        }
    }
}
