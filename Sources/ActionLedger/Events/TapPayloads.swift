/// The payloads of taps, decisions and changes (Specs/events.md, "Action events").

/// `action.reviewed` / `action.confirmed`: a tap bound to the content it was made on.
public struct Tap: Sendable, Equatable {
    public var contentHash: Digest
    public var policyVersion: UInt32
    /// The rules version that judged it (1: recorded before rules were versioned).
    public var rulesVersion: UInt32
    /// The device's signature over the tap statement (schema 3), if it sent one.
    public var proof: SignedProof?
    public init(contentHash: Digest, policyVersion: UInt32, rulesVersion: UInt32 = 1, proof: SignedProof? = nil) {
        self.contentHash = contentHash
        self.policyVersion = policyVersion
        self.rulesVersion = rulesVersion
        self.proof = proof
    }
}

/// `action.approved`.
public struct Approval: Sendable, Equatable {
    public var contentHash: Digest
    public var policyVersion: UInt32
    public var rule: String
    /// The effective stakes the policy applied (never below the proposer's).
    public var stakes: Stakes
    public var userVerified: Bool
    /// The rules version that judged it (1: recorded before rules were versioned).
    public var rulesVersion: UInt32 = 1
    /// The device's signature over the tap statement (schema 3), if it sent one.
    public var proof: SignedProof? = nil

    /// What the audit and printed results say of user verification: proven only by a
    /// user-verification key's signature, else whose word it rests on; nil when not claimed.
    public var userVerificationText: String? {
        guard userVerified else { return nil }
        return Payload.approved(self).proofLevel == .signedUV ? "user verified" : "user verification claimed, unproven"
    }
}

/// `action.auto_shipped`.
public struct AutoShip: Sendable, Equatable {
    public var contentHash: Digest
    public var policyVersion: UInt32
    public var rule: String
    public var confidence: Double
    public var rulesVersion: UInt32 = 1
}

/// `action.dismissed`.
public struct Dismissal: Sendable, Equatable {
    public var reason: String
    public var policyVersion: UInt32
    public var rulesVersion: UInt32 = 1
    /// The device's signature over the dismiss statement (schema 3), if it sent one.
    public var proof: SignedProof? = nil
}

/// `action.held`: out of the Today feed until `until`.
public struct Hold: Sendable, Equatable {
    public var until: Timestamp
    /// The device's signature over the hold statement (schema 2), if it sent one.
    public var proof: SignedProof? = nil
}

/// `action.edited`: a new preview; every earlier tap is void.
public struct Edit: Sendable, Equatable {
    public var preview: Preview
    public var contentHash: Digest
    /// The device's signature over the edit statement (schema 2), if it sent one.
    public var proof: SignedProof?
    public init(preview: Preview) {
        self.init(preview: preview, storedContentHash: EventCodec.contentHash(of: preview))
    }

    /// A decoded edit, with the content hash as stored (see ``Proposal``).
    init(preview: Preview, storedContentHash: Digest) {
        self.preview = preview
        contentHash = storedContentHash
        proof = nil
    }
}

/// `action.executed` / `action.failed`: what happened when it shipped, as JSON text.
public struct Outcome: Sendable, Equatable {
    /// Compact JSON object text; it includes the executing `device`.
    public var outcome: String
}
