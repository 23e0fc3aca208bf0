import ActionLedger
import Foundation
import Hummingbird

/// Recognises bearer secrets: operator tokens (`alt_…`, from the log's `token.*` events) and
/// device sessions (`als_…`, from the session store). Only SHA-256s are compared; a
/// device's identity is re-read from the log on every request, so a device revoked by the
/// CLI a moment ago is refused at once.
final class Authenticator: Sendable {
    private struct TokenCache {
        /// The log's head the cache has folded up to.
        var seq: UInt64 = 0
        var byId: [String: TokenRecord] = [:]
        var byHash: [Digest: String] = [:]
    }

    let ledger: Ledger
    let sessions: SessionStore
    private let cache = Locked(TokenCache())

    init(ledger: Ledger, sessions: SessionStore) {
        self.ledger = ledger
        self.sessions = sessions
    }

    /// The identity behind `secret` at `now`.
    /// - throws: 401 for an unknown, expired or revoked secret; 403 `device_revoked` when the
    ///   device it acts as was revoked.
    func identify(secret: String, now: Timestamp) throws -> Identity {
        let hash = Ledger.tokenHash(secret)
        let identity: Identity
        var session: SessionStore.Session?
        if secret.hasPrefix("als_") {
            guard let s = try sessions.session(secretHash: hash), s.revokedAt == nil, now < s.expiresAt else {
                throw Problem.unauthorized("the session is unknown, expired or signed out")
            }
            session = s
            identity = Identity(id: s.id, org: s.org, scope: .device, subject: s.device, person: s.person, keySeq: s.keySeq,
                                sessionHash: hash)
        } else {
            let (found, seq) = try caughtUp { cache in (cache.byHash[hash].flatMap { cache.byId[$0] }, cache.seq) }
            guard let t = found, t.isLive(at: now) else {
                throw Problem.unauthorized("the token is unknown, expired or revoked")
            }
            identity = Identity(id: t.tokenId, org: t.org, scope: t.issue.scope, subject: t.issue.subject, checkedThrough: seq)
        }
        guard let device = identity.device else { return identity }
        guard let d = try ledger.read({ try $0.deviceState(device) }) else {
            throw Problem.unauthorized("the token's device \(device) is not linked")
        }
        try d.requireLive()
        if let session, !session.isBound(to: d) {
            throw Problem.unauthorized("device \(device)'s key changed since this session signed in: sign in again with its current key")
        }
        var withPerson = identity
        withPerson.person = d.person
        return withPerson
    }

    /// Whether `identity` may still act at `now`: its token unrevoked and unexpired, or its
    /// device session not signed out, unexpired and its device's key still the one that
    /// signed it in; and its device (if any) not revoked.
    /// Stream tickets and open streams ask again, so a revocation or an expiry ends them.
    func isLive(_ identity: Identity, at now: Timestamp) throws -> Bool {
        if identity.id.hasPrefix("tok-") {
            guard try caughtUp({ $0.byId[identity.id]?.isLive(at: now) ?? false }) else { return false }
        } else {
            let record = try identity.sessionHash.map { try sessions.session(secretHash: $0) } ?? sessions.session(id: identity.id)
            guard let s = record, s.id == identity.id, s.revokedAt == nil, now < s.expiresAt else { return false }
            // A rotated key ends the session, and the streams it opened, as a revocation does.
            guard let d = try identity.device.flatMap({ id in try ledger.read { try $0.deviceState(id) } }) else { return false }
            return d.revokedAt == nil && s.isBound(to: d)
        }
        guard let device = identity.device else { return true }
        return try ledger.read { try $0.deviceState(device)?.revokedAt } == nil
    }

    private func caughtUp<T>(_ body: (TokenCache) -> T) throws -> T {
        try cache.withLock { cache in
            try ledger.read { reader in
                let head = try reader.head().seq
                if head > cache.seq {
                    TokenRecord.fold(try reader.tokenEvents(from: cache.seq + 1), into: &cache.byId)
                    cache.byHash = Dictionary(cache.byId.values.map { ($0.issue.secretHash, $0.tokenId) }, uniquingKeysWith: { a, _ in a })
                    cache.seq = head
                }
            }
            return body(cache)
        }
    }
}

/// Puts the caller's identity in the context from `Authorization: Bearer SECRET`. No header:
/// no identity (the route decides whether it needs one). A header with a dead secret: 401 at once.
///
/// A live token spends from its own bucket (`tokens`); a call without one (no header, or a
/// secret refused) from its client address's (``AddressLimit``), so the unauthenticated
/// calls (challenges, sign-ins, pairing-code redemptions) and token guessing are limited too.
struct AuthMiddleware: RouterMiddleware {
    typealias Context = APIContext
    let authenticator: Authenticator
    let tokens: RateLimiter
    let addresses: AddressLimit
    let clock: @Sendable () throws -> Timestamp

    func handle(_ request: Request, context: APIContext, next: (Request, APIContext) async throws -> Response) async throws -> Response {
        guard let header = request.headers[.authorization] else {
            // A stream opened with a ticket is authenticated by it (minted under a token's
            // limit): a browser's EventSource gives up on a 429, so only a refused ticket is charged.
            if !(request.uri.path == "/v1/events" && request.uri.queryParameters["ticket"] != nil) {
                try addresses.charge(request, context)
            }
            return try await next(request, context)
        }
        let identity: Identity
        do {
            // The scheme is case-insensitive (RFC 9110 §11.1): `bearer` is `Bearer`.
            guard header.prefix(7).lowercased() == "bearer ", case let secret = String(header.dropFirst(7)), !secret.isEmpty else {
                throw Problem.unauthorized("expected Authorization: Bearer <token>")
            }
            identity = try authenticator.identify(secret: secret, now: try clock())
        } catch let p as Problem where p.status == .unauthorized {
            try addresses.charge(request, context)
            throw p
        } catch let e as LedgerError where e.code == .deviceRevoked {
            // A revoked device's token is no live token: limited per address like any refused secret.
            try addresses.charge(request, context)
            throw e
        }
        if let wait = tokens.take(identity.id) {
            throw Problem.rateLimited("this token is over its rate limit", retryAfter: wait)
        }
        var context = context
        context.identity = identity
        return try await next(request, context)
    }
}
