import ActionLedger
import Foundation
import HTTPTypes
import Hummingbird

/// Per-token rate limits: a token bucket per identity (token or session id), refilled at
/// `rate` requests per second up to `burst`. An empty bucket answers 429 `rate_limited`
/// with `Retry-After`, before any work is done.
final class RateLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var at: ContinuousClock.Instant
    }

    let rate: Double
    let burst: Double
    private let buckets = Locked([String: Bucket]())

    init(rate: Double, burst: Double) {
        self.rate = rate
        self.burst = burst
    }

    /// Takes one request from `key`'s bucket; nil when allowed, else the seconds to wait.
    func take(_ key: String) -> Int? {
        let now = ContinuousClock.now
        return buckets.withLock { b in
            var bucket = b[key] ?? Bucket(tokens: burst, at: now)
            let elapsed = now - bucket.at
            bucket.tokens = min(burst, bucket.tokens + rate * (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18))
            bucket.at = now
            defer { b[key] = bucket }
            guard bucket.tokens >= 1 else { return max(1, Int(((1 - bucket.tokens) / rate).rounded(.up))) }
            bucket.tokens -= 1
            return nil
        }
    }
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
