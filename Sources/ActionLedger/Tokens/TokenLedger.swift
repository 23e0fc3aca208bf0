/// An operator token as its events describe it: `token.issued`, then maybe `token.revoked`.
public struct TokenRecord: Sendable, Equatable {
    public var issue: TokenIssue
    public var org: String
    public var issuedAt: Timestamp
    public var issuedBy: String
    public var revokedAt: Timestamp?

    public var tokenId: String { issue.tokenId }

    /// Accepted at `now`: not revoked and not expired.
    public func isLive(at now: Timestamp) -> Bool { revokedAt == nil && now < issue.expiresAt }

    /// Folds token events (in log order) into the tokens they describe.
    public static func fold(_ events: [Event], into tokens: inout [String: TokenRecord]) {
        for e in events {
            switch e.payload {
            case .tokenIssued(let t):
                tokens[t.tokenId] = TokenRecord(issue: t, org: e.org, issuedAt: e.at, issuedBy: e.actor)
            case .tokenRevoked(let r):
                if tokens[r.tokenId]?.revokedAt == nil { tokens[r.tokenId]?.revokedAt = e.at }
            default:
                break
            }
        }
    }

    /// `{"token_id", "org", "scope", "subject", "expires_at", "issued_at", "issued_by", "revoked_at"}`.
    public var json: JSON {
        ["token_id": .string(tokenId), "org": .string(org), "scope": .string(issue.scope.rawValue),
         "subject": issue.subject.map(JSON.string) ?? .null, "expires_at": .string(issue.expiresAt.iso8601),
         "issued_at": .string(issuedAt.iso8601), "issued_by": .string(issuedBy),
         "revoked_at": revokedAt.map { .string($0.iso8601) } ?? .null]
    }
}

/// A newly issued token: its record and the secret, which exists nowhere else.
public struct IssuedToken: Sendable {
    public var record: TokenRecord
    /// `alt_<token id>_<64 hex>`: shown once, then only its SHA-256 is kept.
    public var secret: String
}

extension Ledger {
    /// The SHA-256 a token secret is recognised by.
    public static func tokenHash(_ secret: String) -> Digest {
        Array(secret.utf8).withUnsafeBytes { Digest.sha256($0) }
    }

    /// Issues an operator token for `ledger serve` and records `token.issued` (the secret's
    /// hash, never the secret). A device token's device must be linked in `org` and live.
    /// - throws: `invalid_input`, `unknown_device`, `org_mismatch`, `device_revoked`.
    public func issueToken(org: String, scope: TokenScope, subject: String?, expiresAt: Timestamp, now: Timestamp,
                           actor: String = "operator", commandId: String = CommandRequest.newCommandId()) throws -> IssuedToken {
        var random = SystemRandomNumberGenerator()
        return try issueToken(org: org, scope: scope, subject: subject, expiresAt: expiresAt, now: now, actor: actor,
                              commandId: commandId, random: &random)
    }

    /// ``issueToken(org:scope:subject:expiresAt:now:actor:commandId:)`` drawing the id and
    /// secret from `random`: a seeded generator makes the examples in Specs reproducible.
    public func issueToken(org: String, scope: TokenScope, subject: String?, expiresAt: Timestamp, now: Timestamp,
                           actor: String = "operator", commandId: String,
                           random: inout some RandomNumberGenerator) throws -> IssuedToken {
        for (field, id) in [("org", org), ("actor", actor), ("command_id", commandId), ("subject", subject ?? "auditor")] {
            if let bad = FieldReader.identifierProblem(id) { throw LedgerError(.invalidInput, "\(field) \(bad)", details: ["field": .string(field)]) }
        }
        guard (scope == .auditor) == (subject == nil) else {
            throw LedgerError(.invalidInput, scope == .auditor ? "an auditor token acts as nobody: no --device or --agent"
                : scope == .device ? "a device token needs --device" : "a specialist token needs --agent", details: ["field": "subject"])
        }
        // Within the engine's times (2000…2100): a time past year 9999 has no ISO-8601 form,
        // and the store's own export would be refused.
        guard expiresAt < TimeRules.latest else {
            throw LedgerError(.invalidInput, "the token would expire at \(expiresAt.iso8601), after the engine's last time "
                + "\(TimeRules.latest.iso8601)", details: ["field": "expires_at"])
        }
        let tokenId = "tok-" + Hex.encode(random.next() as UInt64)
        let secret = "alt_\(tokenId)_" + Hex.encode((0..<32).map { _ in UInt8.random(in: 0...255, using: &random) })
        let issue = TokenIssue(tokenId: tokenId, scope: scope, subject: subject, expiresAt: expiresAt, secretHash: Self.tokenHash(secret))
        var record: TokenRecord?
        try perform { session in
            let reader = session.reader
            if try reader.command(commandId) != nil {
                throw LedgerError(.invalidInput, "command id \(commandId) was already used", details: ["field": "command_id"])
            }
            if scope == .device, let device = subject {
                guard let d = try reader.deviceState(device) else {
                    throw LedgerError(.unknownDevice, "no device \(device)", details: ["device": .string(device)])
                }
                guard d.org == org else {
                    throw LedgerError(.orgMismatch, "device \(device) belongs to org \(d.org), not \(org)",
                                      details: ["device": .string(device), "person": .string(d.person), "org": .string(org)])
                }
                try d.requireLive()
            }
            let at = try TimeRules.check(now, head: try session.headTime())
            guard expiresAt > at else { throw LedgerError(.invalidInput, "the expiry is not in the future", details: ["field": "expires"]) }
            let stored = try session.append(Event(at: at, actor: actor, commandId: commandId, org: org, person: actor,
                                                  payload: .tokenIssued(issue)))
            try session.recordCommand(commandId, first: stored.event.seq, count: 1)
            record = TokenRecord(issue: issue, org: org, issuedAt: at, issuedBy: actor)
        }
        return IssuedToken(record: record!, secret: secret)
    }

    /// Revokes a token (`token.revoked`): from now on it is refused.
    @discardableResult
    /// - throws: `unknown_token`; `invalid_input` when it was already revoked.
    public func revokeToken(_ tokenId: String, reason: String = "", now: Timestamp, actor: String = "operator",
                            commandId: String = CommandRequest.newCommandId()) throws -> TokenRecord {
        try FieldReader.requireReason(reason)
        var revoked: TokenRecord?
        try perform { session in
            guard var record = try session.reader.tokens()[tokenId] else {
                throw LedgerError(.unknownToken, "no token \(tokenId)", details: ["token_id": .string(tokenId)])
            }
            guard record.revokedAt == nil else {
                throw LedgerError(.invalidInput, "token \(tokenId) was already revoked", details: ["token_id": .string(tokenId)])
            }
            let at = try TimeRules.check(now, head: try session.headTime())
            let stored = try session.append(Event(at: at, actor: actor, commandId: commandId, org: record.org, person: actor,
                                                  payload: .tokenRevoked(TokenRevocation(tokenId: tokenId, reason: reason))))
            try session.recordCommand(commandId, first: stored.event.seq, count: 1)
            record.revokedAt = at
            revoked = record
        }
        return revoked!
    }
}

extension LogReader {
    /// Every token ever issued, by id. Token events are rare: the log is scanned for their
    /// type byte without decoding anything else.
    public func tokens(from: UInt64 = 1) throws -> [String: TokenRecord] {
        var tokens: [String: TokenRecord] = [:]
        TokenRecord.fold(try tokenEvents(from: from), into: &tokens)
        return tokens
    }

    /// The token events from seq `from` on, in log order.
    public func tokenEvents(from: UInt64 = 1) throws -> [Event] {
        var events: [Event] = []
        let issued = EventType.tokenIssued.rawValue, revoked = EventType.tokenRevoked.rawValue
        try forEachRaw(from: from) { _, v in
            // hash (32) ‖ format (1) ‖ type (1) …: the type byte sits at offset 33.
            if v.count > 33, v[33] == issued || v[33] == revoked { events.append(try LogReader.decode(v).event) }
            return true
        }
        return events
    }
}
