import Foundation

/// A device's signed statement as a client sends it with a tap (`--proof FILE`, or made
/// by the CLI with `--key FILE`).
public struct ProofInput: Sendable, Equatable {
    /// The time the device claims it signed: the statement's `claimed_at`.
    public var claimedAt: Timestamp
    /// ECDSA P-256/SHA-256 over the statement, raw r‖s (DER is normalised by ``init(json:claimedAt:)``).
    public var signature: [UInt8]
    /// The content hash the device displayed; nil: the action's current one.
    public var contentHash: Digest?
    /// The statement bytes the client says it signed, if it sent them: a mismatch is then
    /// reported line by line instead of as a bare signature failure.
    public var statement: [UInt8]?
    /// A `webauthn` proof's assertion; nil for `p256` (`signature` is then over the statement).
    public var webauthn: WebAuthnAssertion?

    public init(claimedAt: Timestamp, signature: [UInt8], contentHash: Digest? = nil, statement: [UInt8]? = nil,
                webauthn: WebAuthnAssertion? = nil) {
        self.claimedAt = claimedAt
        self.signature = signature
        self.contentHash = contentHash
        self.statement = statement
        self.webauthn = webauthn
    }

    /// Reads `{"format":"p256","signature": base64 (DER or raw r‖s)[, "statement": hex]}` or
    /// `{"format":"webauthn","authenticator_data","client_data_json","signature"}` (base64url;
    /// the signature DER), Specs/statements.md §2.4.
    public init(json: JSON, claimedAt: Timestamp, contentHash: Digest? = nil) throws {
        var r = try FieldReader(json, path: "proof")
        let format = try r.string("format", max: 16)
        if format == "webauthn" {
            func bytes(_ key: String, _ max: Int) throws -> [UInt8] {
                guard let b = Base64.decodeURL(try r.string(key, max: 2 * max)), !b.isEmpty, b.count <= max else {
                    throw r.fail(key, "expected base64url of at most \(max) bytes")
                }
                return b
            }
            let a = WebAuthnAssertion(authenticatorData: try bytes("authenticator_data", WebAuthnAssertion.maxAuthenticatorData),
                                      clientDataJSON: try bytes("client_data_json", WebAuthnAssertion.maxClientData))
            guard let sig = P256Signature.normalize(try bytes("signature", 128)) else {
                throw r.fail("signature", "expected base64url of a DER ECDSA P-256 signature")
            }
            try r.finish()
            self.init(claimedAt: claimedAt, signature: sig, contentHash: contentHash, webauthn: a)
            return
        }
        guard format == "p256" else { throw r.fail("format", "expected p256 or webauthn") }
        let text = try r.string("signature", max: 256)
        guard let raw = Base64.decode(text), let sig = P256Signature.normalize(raw) else {
            throw r.fail("signature", "expected base64 of a DER or raw (r‖s, 64 bytes) ECDSA P-256 signature")
        }
        var statement: [UInt8]?
        if r.raw("statement") != nil { statement = try r.hexBytes("statement", count: nil) }
        try r.finish()
        self.init(claimedAt: claimedAt, signature: sig, contentHash: contentHash, statement: statement)
    }
}
