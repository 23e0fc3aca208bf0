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
    /// ECDSA P-256/SHA-256 over the statement (`p256`) or over the assertion's signed
    /// bytes (`webauthn`), raw r‖s (64 bytes).
    public var signature: [UInt8]
    /// The WebAuthn assertion of a `webauthn` proof; nil for `p256`.
    public var webauthn: WebAuthnAssertion?

    public init(claimedAt: Timestamp, contentHash: Digest, keyFingerprint: Digest, level: ProofLevel, signature: [UInt8],
                webauthn: WebAuthnAssertion? = nil) {
        self.claimedAt = claimedAt
        self.contentHash = contentHash
        self.keyFingerprint = keyFingerprint
        self.level = level
        self.signature = signature
        self.webauthn = webauthn
    }

    /// The proof formats: a signature over the statement, or a WebAuthn assertion whose
    /// challenge is the statement's SHA-256 (Specs/statements.md §2.4).
    static let p256Format: UInt8 = 1, webauthnFormat: UInt8 = 2

    /// Why a `signed_uv` proof counts as user verification: the key's declared protection
    /// (`p256`) or the authenticator's UV flag (`webauthn`).
    public var userVerificationBasis: String? {
        level == .signedUV ? (webauthn == nil ? Self.declaredKeyProtection : "webauthn_uv") : nil
    }

    /// The basis of a `signed_uv` that rests on the key's declared protection.
    static let declaredKeyProtection = "declared_key_protection"

    func encode(_ w: inout BinaryWriter) {
        w.u8(webauthn == nil ? Self.p256Format : Self.webauthnFormat)
        w.timestamp(claimedAt)
        w.digest(contentHash)
        w.digest(keyFingerprint)
        w.u8(level == .signedUV ? 2 : 1)
        w.bytes.append(contentsOf: signature)
        if let a = webauthn {
            w.varint(UInt64(a.authenticatorData.count))
            w.bytes.append(contentsOf: a.authenticatorData)
            w.varint(UInt64(a.clientDataJSON.count))
            w.bytes.append(contentsOf: a.clientDataJSON)
        }
    }

    static func decode(_ r: inout BinaryReader) throws -> SignedProof {
        let format = try r.u8()
        guard format == p256Format || format == webauthnFormat else { throw r.fail("unknown proof format") }
        let claimed = try r.timestamp(), content = try r.digest(), fingerprint = try r.digest()
        let level: ProofLevel
        switch try r.u8() {
        case 1: level = .signed
        case 2: level = .signedUV
        default: throw r.fail("invalid proof level")
        }
        var proof = SignedProof(claimedAt: claimed, contentHash: content, keyFingerprint: fingerprint, level: level,
                                signature: try r.raw(64))
        if format == webauthnFormat {
            func bytes(_ max: Int) throws -> [UInt8] {
                let n = try r.varint()
                guard n <= UInt64(max) else { throw r.fail("webauthn field too long") }
                return try r.raw(Int(n))
            }
            proof.webauthn = WebAuthnAssertion(authenticatorData: try bytes(WebAuthnAssertion.maxAuthenticatorData),
                                               clientDataJSON: try bytes(WebAuthnAssertion.maxClientData))
        }
        return proof
    }

    var json: JSON {
        var o: JSONObject = ["format": webauthn == nil ? "p256" : "webauthn", "claimed_at": .string(claimedAt.iso8601),
                             "content_hash": .string(contentHash.hex), "key_fingerprint": .string(keyFingerprint.hex),
                             "level": .string(level.rawValue), "signature": .string(Hex.encode(signature))]
        if let a = webauthn {
            o["authenticator_data"] = .string(Hex.encode(a.authenticatorData))
            o["client_data_json"] = .string(Hex.encode(a.clientDataJSON))
        }
        return .object(o)
    }

    init(fields: FieldReader) throws {
        var r = fields
        let format = try r.string("format", max: 16)
        guard format == "p256" || format == "webauthn" else { throw r.fail("format", "expected p256 or webauthn") }
        if format == "webauthn" {
            func bytes(_ key: String, _ max: Int) throws -> [UInt8] {
                guard let b = Hex.decode(try r.string(key, max: 2 * max)), !b.isEmpty else { throw r.fail(key, "expected lowercase hex") }
                return b
            }
            webauthn = WebAuthnAssertion(authenticatorData: try bytes("authenticator_data", WebAuthnAssertion.maxAuthenticatorData),
                                         clientDataJSON: try bytes("client_data_json", WebAuthnAssertion.maxClientData))
        }
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
