/// The payloads of operator-token events (Specs/events.md, "Token events"): the bearer
/// tokens `ledger serve` accepts. The log records who may call the API and since when;
/// the secret itself is never recorded, only its SHA-256.

/// What a token may do (Specs/cli.md, `ledger tokens issue`).
public enum TokenScope: String, Sendable, CaseIterable {
    /// Acts as one linked device: its person's actions only.
    case device
    /// Proposes as one named agent and records outcomes of its own proposals.
    case specialist
    /// Reads everything of its org; writes nothing.
    case auditor

    var code: UInt8 {
        switch self {
        case .device: 1
        case .specialist: 2
        case .auditor: 3
        }
    }

    init?(code: UInt8) {
        guard let s = TokenScope.allCases.first(where: { $0.code == code }) else { return nil }
        self = s
    }
}

/// `token.issued`.
public struct TokenIssue: Sendable, Equatable {
    /// The token's public id (`tok-…`): what `tokens list` shows and `tokens revoke` takes.
    public var tokenId: String
    public var scope: TokenScope
    /// The device (device scope) or agent (specialist scope) it acts as; nil for an auditor.
    public var subject: String?
    /// After this time the token is refused.
    public var expiresAt: Timestamp
    /// SHA-256 of the secret's UTF-8 bytes: enough to recognise the secret, useless to forge it
    /// (the secret carries 256 random bits).
    public var secretHash: Digest

    public init(tokenId: String, scope: TokenScope, subject: String?, expiresAt: Timestamp, secretHash: Digest) {
        self.tokenId = tokenId
        self.scope = scope
        self.subject = subject
        self.expiresAt = expiresAt
        self.secretHash = secretHash
    }
}

/// `token.revoked`.
public struct TokenRevocation: Sendable, Equatable {
    public var tokenId: String
    public var reason: String

    public init(tokenId: String, reason: String) {
        self.tokenId = tokenId
        self.reason = reason
    }
}

extension EventCodec {
    // Canonical payloads (integrity.md): token.issued = token id, scope byte, optional
    // subject, expiry, secret hash; token.revoked = token id, reason.
    static func encodeToken(_ t: TokenIssue, _ w: inout BinaryWriter) {
        w.string(t.tokenId)
        w.u8(t.scope.code)
        w.optional(t.subject) { $0.string($1) }
        w.timestamp(t.expiresAt)
        w.digest(t.secretHash)
    }

    static func decodeToken(_ r: inout BinaryReader) throws -> TokenIssue {
        let id = try r.string()
        let code = try r.u8()
        guard let scope = TokenScope(code: code) else { throw r.fail("unknown token scope \(code)") }
        return TokenIssue(tokenId: id, scope: scope, subject: try r.optional { try $0.string() },
                          expiresAt: try r.timestamp(), secretHash: try r.digest())
    }
}

extension Payload {
    static func tokenJSON(_ t: TokenIssue) -> JSON {
        ["token_id": .string(t.tokenId), "scope": .string(t.scope.rawValue), "subject": t.subject.map(JSON.string) ?? .null,
         "expires_at": .string(t.expiresAt.iso8601), "secret_sha256": .string(t.secretHash.hex)]
    }

    static func token(_ r: inout FieldReader) throws -> TokenIssue {
        let id = try r.identifier("token_id")
        let scopeName = try r.string("scope", max: 16)
        guard let scope = TokenScope(rawValue: scopeName) else { throw r.fail("scope", "expected device, specialist or auditor") }
        let subject = try r.optionalIdentifier("subject")
        if (scope == .auditor) != (subject == nil) {
            throw r.fail("subject", scope == .auditor ? "is not allowed for an auditor token" : "is required for a \(scopeName) token")
        }
        return TokenIssue(tokenId: id, scope: scope, subject: subject, expiresAt: try r.timestamp("expires_at"),
                          secretHash: try r.digest("secret_sha256"))
    }
}
