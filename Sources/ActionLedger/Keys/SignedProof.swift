/// How strongly a tap is tied to its person (Specs/statements.md, "Proof levels").
public enum ProofLevel: String, Sendable, CaseIterable {
    /// No proof: the device id is the caller's claim.
    case none
    /// The client said it verified the user (`--user-verified`), unproven.
    case asserted
    /// A P-256 signature by the device's key over the tap statement.
    case signed
    /// As `signed`, by a key whose holder declared `user-verification` protection.
    case signedUV = "signed_uv"
}

/// The proof recorded in a signed tap (the tap types' newest schema): everything an
/// offline verifier needs, with the envelope and payload, to rebuild the statement and
/// check the signature against the key in force for the device.
public struct SignedProof: Sendable, Equatable {
    /// The time the device claims it signed; the event's `at` stays the engine's.
    public var claimedAt: Timestamp
    /// The content hash the device displayed (the statement's `content` line).
    public var contentHash: Digest
    /// SHA-256 of the signing key's SPKI DER.
    public var keyFingerprint: Digest
    /// `signed` or `signed_uv`.
    public var level: ProofLevel
    /// ECDSA P-256/SHA-256 over the statement, raw r‖s (64 bytes).
    public var signature: [UInt8]

    public init(claimedAt: Timestamp, contentHash: Digest, keyFingerprint: Digest, level: ProofLevel, signature: [UInt8]) {
        self.claimedAt = claimedAt
        self.contentHash = contentHash
        self.keyFingerprint = keyFingerprint
        self.level = level
        self.signature = signature
    }

    /// The one proof format of this version (a later WebAuthn format gets another byte).
    static let p256Format: UInt8 = 1

    func encode(_ w: inout BinaryWriter) {
        w.u8(Self.p256Format)
        w.timestamp(claimedAt)
        w.digest(contentHash)
        w.digest(keyFingerprint)
        w.u8(level == .signedUV ? 2 : 1)
        w.bytes.append(contentsOf: signature)
    }

    static func decode(_ r: inout BinaryReader) throws -> SignedProof {
        guard try r.u8() == p256Format else { throw r.fail("unknown proof format") }
        let claimed = try r.timestamp(), content = try r.digest(), fingerprint = try r.digest()
        let level: ProofLevel
        switch try r.u8() {
        case 1: level = .signed
        case 2: level = .signedUV
        default: throw r.fail("invalid proof level")
        }
        return SignedProof(claimedAt: claimed, contentHash: content, keyFingerprint: fingerprint, level: level,
                           signature: try r.raw(64))
    }

    var json: JSON {
        ["format": "p256", "claimed_at": .string(claimedAt.iso8601), "content_hash": .string(contentHash.hex),
         "key_fingerprint": .string(keyFingerprint.hex), "level": .string(level.rawValue),
         "signature": .string(Hex.encode(signature))]
    }

    init(fields: FieldReader) throws {
        var r = fields
        guard try r.string("format", max: 16) == "p256" else { throw r.fail("format", "expected p256") }
        claimedAt = try r.timestamp("claimed_at")
        contentHash = try r.digest("content_hash")
        keyFingerprint = try r.digest("key_fingerprint")
        let level = try r.string("level", max: 16)
        guard level == "signed" || level == "signed_uv" else { throw r.fail("level", "expected signed or signed_uv") }
        self.level = ProofLevel(rawValue: level)!
        signature = try r.hexBytes("signature", count: 64)
        try r.finish()
    }
}
