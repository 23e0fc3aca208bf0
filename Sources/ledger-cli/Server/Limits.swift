import ActionLedger
import Foundation
import HTTPTypes
import Hummingbird

/// Rate limits: a token bucket per key (a token or session id, or a client address for
/// calls without a live token), refilled at `rate` requests per second up to `burst`. An
/// empty bucket answers 429 `rate_limited` with `Retry-After`, before any work is done.
///
/// Memory is bounded: at most `capacity` keys are remembered, in two generations. A key is
/// found in the current one or moved up from the previous; when the current one is half
/// the capacity it becomes the previous and the oldest generation is dropped. So a key is
/// forgotten only after at least `capacity / 2` others arrived since its last call, and
/// then comes back with a full bucket: forgetting only ever favours a caller (a flood of
/// new addresses cannot empty anyone's bucket), and is O(1), unlike a strict LRU's list.
final class RateLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var at: ContinuousClock.Instant
    }

    private struct Generations {
        var current: [String: Bucket] = [:]
        var previous: [String: Bucket] = [:]
    }

    let rate: Double
    let burst: Double
    let capacity: Int
    private let buckets = Locked(Generations())

    init(rate: Double, burst: Double, capacity: Int = 10_000) {
        self.rate = rate
        self.burst = burst
        self.capacity = max(2, capacity)
    }

    /// Takes one request from `key`'s bucket at `now`; nil when allowed, else the seconds to wait.
    func take(_ key: String, at now: ContinuousClock.Instant = .now) -> Int? {
        buckets.withLock { g in
            var bucket = g.current[key] ?? g.previous.removeValue(forKey: key) ?? Bucket(tokens: burst, at: now)
            let elapsed = now - bucket.at
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            bucket.tokens = min(burst, bucket.tokens + rate * max(0, seconds))
            bucket.at = max(bucket.at, now)
            if g.current[key] == nil, g.current.count >= capacity / 2 {
                g.previous = g.current
                g.current = [:]
            }
            defer { g.current[key] = bucket }
            guard bucket.tokens >= 1 else { return max(1, Int(min(86_400, ((1 - bucket.tokens) / rate).rounded(.up)))) }
            bucket.tokens -= 1
            return nil
        }
    }

    /// How many keys are remembered now (never more than `capacity`).
    var remembered: Int { buckets.withLock { $0.current.count + $0.previous.count } }
}

/// The limit on calls made without a live token, per client address (``ClientAddress``):
/// the peer's, or behind a trusted reverse proxy the one its `X-Forwarded-For` names.
struct AddressLimit: Sendable {
    let limiter: RateLimiter
    let trustedProxies: Set<ClientAddress>

    /// Spends one call from the caller's address.
    /// - throws: 429 `rate_limited` with `Retry-After` when its bucket is empty.
    func charge(_ request: Request, _ context: APIContext,
                refusal: String = "too many calls without a token from this address") throws {
        let peer = context.remoteAddress?.ipAddress.flatMap { ClientAddress($0) }
        let client = ClientAddress.client(peer: peer, forwardedFor: request.headers[.xForwardedFor], trusted: trustedProxies)
        if let wait = limiter.take(client?.bucket ?? "unknown") {
            throw Problem.rateLimited(refusal, retryAfter: wait)
        }
    }
}

extension HTTPField.Name {
    static let xForwardedFor = HTTPField.Name("X-Forwarded-For")!
}

/// CORS for the configured web-companion origins: preflights are answered here, and
/// responses to those origins name them. Other origins get no CORS headers (the browser
/// then refuses to expose the response).
struct CORSMiddleware: RouterMiddleware {
    typealias Context = APIContext
    let origins: Set<String>

    static let allowHeaders = "Authorization, Content-Type, Idempotency-Key, If-Match, Last-Event-ID"
    static let exposeHeaders = "ETag, Idempotent-Replayed, Retry-After"

    func handle(_ request: Request, context: APIContext, next: (Request, APIContext) async throws -> Response) async throws -> Response {
        guard let origin = request.headers[.origin], origins.contains(origin) else { return try await next(request, context) }
        var headers: HTTPFields = [.accessControlAllowOrigin: origin, .vary: "Origin"]
        if request.method == .options {
            headers[.accessControlAllowMethods] = "GET, POST"
            headers[.accessControlAllowHeaders] = Self.allowHeaders
            headers[.accessControlMaxAge] = "600"
            return Response(status: .noContent, headers: headers)
        }
        var response = try await next(request, context)
        response.headers[.accessControlAllowOrigin] = origin
        response.headers[.vary] = "Origin"
        response.headers[.accessControlExposeHeaders] = Self.exposeHeaders
        return response
    }
}
