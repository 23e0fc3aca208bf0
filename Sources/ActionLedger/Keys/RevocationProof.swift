/// What proves a revocation she made from one of her devices (`device.revoked` schema 2):
/// that device's key in force signed the session challenge statement whose purpose names
/// the revoked device (Specs/statements.md §3.4). The server checked it before the engine
/// recorded it; recorded, an auditor checks it again from the log alone.
public struct RevocationProof: Sendable, Equatable {
    /// SHA-256 of the signing key's SPKI DER: the revoking device's key in force.
    public var keyFingerprint: Digest
    /// The challenge line's 32 bytes (statement line 5), as the server issued them.
    public var challenge: Digest
    /// Raw r‖s, 64 bytes.
    public var signature: [UInt8]

    public init(keyFingerprint: Digest, challenge: Digest, signature: [UInt8]) {
        self.keyFingerprint = keyFingerprint
        self.challenge = challenge
        self.signature = signature
    }

    /// The statement the revoking device `by` signed to revoke `target`.
    public static func statement(storeId: Digest, by: String, revoking target: String, challenge: Digest) -> [UInt8] {
        Statement.session(storeId: storeId, device: by, purpose: purpose(revoking: target), challenge: challenge)
    }

    /// The session statement's purpose line value for revoking `target` (statements.md §3.4).
    public static func purpose(revoking target: String) -> String { "revoke:\(target)" }

    /// Checks that `key`, the revoking device `by`'s key in force, made this signature over the
    /// statement revoking `target` in the store `storeId`.
    /// - throws: `bad_proof` with `problem` `key` or `signature`.
    func check(revoking target: String, by: String, key: DeviceKey?, storeId: Digest?) throws {
        guard let key else { throw RecordedProof.bad("device \(by) has no key, yet the revocation records its signature", "key") }
        guard keyFingerprint == key.fingerprint else {
            throw RecordedProof.bad("the revocation was signed with key \(keyFingerprint.hex.prefix(16))…, device \(by)'s key in force is "
                + "\(key.fingerprint.hex.prefix(16))…", "key")
        }
        guard let storeId, signature.count == 64,
              key.verifies(signature, over: Self.statement(storeId: storeId, by: by, revoking: target, challenge: challenge)) else {
            throw RecordedProof.bad("device \(by)'s signature does not verify over the challenge statement revoking \(target)", "signature")
        }
    }

    func encode(_ w: inout BinaryWriter) {
        w.digest(keyFingerprint)
        w.digest(challenge)
        w.bytes.append(contentsOf: signature)
    }

    static func decode(_ r: inout BinaryReader) throws -> RevocationProof {
        RevocationProof(keyFingerprint: try r.digest(), challenge: try r.digest(), signature: try r.raw(64))
    }

    /// `proof` of `device.revoked` schema 2 (Specs/events.md).
    public var json: JSON {
        ["key_fingerprint": .string(keyFingerprint.hex), "challenge": .string(challenge.hex), "signature": .string(Hex.encode(signature))]
    }

    init(fields: FieldReader) throws {
        var r = fields
        keyFingerprint = try r.digest("key_fingerprint")
        challenge = try r.digest("challenge")
        signature = try r.hexBytes("signature", count: 64)
        try r.finish()
    }
}
