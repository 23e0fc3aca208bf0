import ActionLedger
import Foundation
import Hummingbird

/// A refusal as RFC 9457 `application/problem+json`: `type`, `title`, `status`, `detail`,
/// and `code` (the engine's error code, or one of the server's own: `unauthorized`,
/// `forbidden`, `not_found`, `payload_too_large`, `rate_limited`, `internal_error`), with the
/// engine's details beside them.
struct Problem: HTTPResponseError {
    let status: HTTPResponse.Status
    let code: String
    let detail: String
    var extra: JSONObject = JSONObject()
    /// Seconds for `Retry-After` (503 `busy`, `projection_stale`).
    var retryAfter: Int?
    /// `Allow` for a 405.
    var allow: String?

    init(_ status: HTTPResponse.Status, _ code: String, _ detail: String, extra: JSONObject = JSONObject()) {
        self.status = status
        self.code = code
        self.detail = detail
        self.extra = extra
    }

    /// The engine's refusal with its HTTP status (Specs/openapi.yaml lists each).
    init(_ error: LedgerError) {
        self.init(Problem.status(of: error.code), error.code.rawValue, error.message, extra: error.details)
        if status == .serviceUnavailable { retryAfter = 1 }
        // A clock behind the log is no passing outage: the wait is known (up to decades, when a
        // clock running ahead dated the log's last event), and a client retrying every second
        // would spend its rate limit for nothing.
        if error.code == .clockBehind, case .number(let wait)? = error.details["wait_ms"] {
            retryAfter = Int(max(1, min((wait / 1000).rounded(.up), Double(Int32.max))))
        }
    }

    static func unauthorized(_ detail: String) -> Problem { Problem(.unauthorized, "unauthorized", detail) }
    static func rateLimited(_ detail: String, retryAfter seconds: Int) -> Problem {
        var p = Problem(.tooManyRequests, "rate_limited", "\(detail); retry in \(seconds) s")
        p.retryAfter = seconds
        return p
    }
    static func forbidden(_ detail: String) -> Problem { Problem(.forbidden, "forbidden", detail) }
    static func invalid(_ detail: String, field: String? = nil) -> Problem {
        Problem(.badRequest, LedgerError.Code.invalidInput.rawValue, detail, extra: field.map { ["field": .string($0)] } ?? JSONObject())
    }

    static func status(of code: LedgerError.Code) -> HTTPResponse.Status {
        switch code {
        case .invalidInput: .badRequest
        case .unknownAction, .unknownDevice, .unknownToken: .notFound
        case .deviceRevoked, .deviceNotOwned, .orgMismatch, .proofRequired, .badProof, .introductionRequired: .forbidden
        case .alreadyDecided, .duplicateAction, .tapsRequired, .userVerificationRequired, .actionExpired, .notApproved,
             .duplicateDevice, .notEmpty: .conflict
        case .staleContent: .preconditionFailed
        case .projectionStale, .busy, .readOnly, .clockBehind, .migrationRequired: .serviceUnavailable
        default: .internalServerError
        }
    }

    var json: JSON {
        var o: JSONObject = ["type": .string("https://actionledger.dev/problems/\(code)"), "title": .string(status.reasonPhrase),
                             "status": .number(Double(status.code)), "code": .string(code), "detail": .string(detail)]
        for (k, v) in extra.pairs where o[k] == nil { o[k] = v }
        return .object(o)
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers: HTTPFields = [.contentType: "application/problem+json", .cacheControl: "no-store"]
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        if let allow { headers[.allow] = allow }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: json.serialized())))
    }
}

/// Turns every error into a problem document: the engine's refusals with their mapped
/// status, Hummingbird's own (404 route, 413 body) with theirs, anything else a 500 that
/// names no internals.
struct ProblemMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The store's path: its folder is left out of what a client is told.
    let store: String

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let response = try await problems(request, context: context, next: next)
        // HEAD answers what GET would, headers only: a refusal's problem document too (a body
        // after a HEAD answer would be read as the start of the connection's next response).
        return request.method == .head ? Self.headersOnly(response) : response
    }

    /// `response` without its body, keeping the length GET's body has (RFC 9110 §9.3.2: a
    /// HEAD's Content-Length is GET's; a stream's, of unknown length, has none). The channel
    /// writes no body for a HEAD either way.
    static func headersOnly(_ response: Response) -> Response {
        Response(status: response.status, headers: response.headers, body: ResponseBody(contentLength: response.body.contentLength) { _ in })
    }

    /// `error` without the store's folder: a storage or integrity failure names the store's
    /// files, and where the server keeps them is no client's business (the server's log has it).
    static func redacted(_ error: LedgerError, store: String) -> LedgerError {
        guard error.code == .storage || error.code == .integrityFailure else { return error }
        let dir = PathName.folder(of: store)
        guard dir != "." else { return error }
        return LedgerError(error.code, error.message.replacingOccurrences(of: dir + "/", with: ""), details: error.details)
    }

    /// What a client is told of a failure reading the store: the engine's error as the CLI
    /// says it (an LMDB failure mapped as ``LMDBError/ledgerError(store:)`` maps it), without
    /// the store's folder; nil for any other error.
    static func clientError(_ error: any Error, store: String) -> LedgerError? {
        switch error {
        case let e as LedgerError: redacted(e, store: store)
        case let e as LMDBError: redacted(e.ledgerError(store: store), store: store)
        default: nil
        }
    }

    private func problems(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            try Query.refuseRepeated(request)
            return try await next(request, context)
        } catch let p as Problem {
            return try p.response(from: request, context: context)
        } catch let e as LedgerError {
            return try Problem(Self.redacted(e, store: store)).response(from: request, context: context)
        } catch let e as LMDBError {
            // As the CLI says it (damage, or a storage failure), without the store's folder.
            context.logger.error("storage error", metadata: ["error": "\(e)"])
            return try Problem(Self.redacted(e.ledgerError(store: store), store: store)).response(from: request, context: context)
        } catch let e as HTTPError where e.status == .notFound {
            // A known path with another method: 405 with the methods it has.
            if let allowed = RouteTable.methods(for: request.uri.path) {
                var p = Problem(.methodNotAllowed, "method_not_allowed", "\(request.method.rawValue) is not allowed here; use \(allowed)")
                p.allow = allowed
                return try p.response(from: request, context: context)
            }
            return try Problem(.notFound, "not_found", "no such endpoint").response(from: request, context: context)
        } catch let e as HTTPError {
            let code = switch e.status {
            case .notFound: "not_found"
            case .contentTooLarge: "payload_too_large"
            case .methodNotAllowed: "method_not_allowed"
            default: e.status.code < 500 ? "invalid_input" : "internal_error"
            }
            return try Problem(e.status, code, e.body ?? e.status.reasonPhrase).response(from: request, context: context)
        } catch {
            context.logger.error("unexpected error", metadata: ["error": "\(error)"])
            return try Problem(.internalServerError, "internal_error", "internal error").response(from: request, context: context)
        }
    }
}

/// Every route's path pattern and methods: what a 405 names in `Allow` (Specs/openapi.yaml lists the same).
enum RouteTable {
    static let routes: [(pattern: [Substring], methods: String)] = [
        ("/healthz", "GET"), ("/metrics", "GET"), ("/openapi.yaml", "GET"),
        ("/v1/actions", "POST"), ("/v1/actions/*", "GET"), ("/v1/actions/*/statement", "GET"),
        ("/v1/actions/*/review", "POST"), ("/v1/actions/*/confirm", "POST"), ("/v1/actions/*/approve", "POST"),
        ("/v1/actions/*/dismiss", "POST"), ("/v1/actions/*/edit", "POST"), ("/v1/actions/*/hold", "POST"),
        ("/v1/actions/*/outcome", "POST"), ("/v1/today", "GET"), ("/v1/devices", "GET, POST"), ("/v1/devices/*/revoke", "POST"),
        ("/v1/devices/*/rotation-statement", "POST"), ("/v1/devices/*/rotate-key", "POST"),
        ("/v1/devices/pairing", "POST"), ("/v1/devices/pairing/*", "GET"), ("/v1/devices/pairing/*/approve", "POST"),
        ("/v1/audit/actions/*", "GET"), ("/v1/audit/devices/*", "GET"), ("/v1/audit/autoshipped", "GET"),
        ("/v1/audit/actors/*", "GET"), ("/v1/audit/specialists/*", "GET"), ("/v1/audit/surfaces/*", "GET"),
        ("/v1/audit/proofs", "GET"), ("/v1/audit/activity", "GET"),
        ("/v1/audit/replay", "GET"), ("/v1/events", "GET"), ("/v1/streams/tickets", "POST"),
        ("/v1/sessions/challenge", "POST"), ("/v1/sessions", "POST"), ("/v1/sessions/sign-out-others", "POST"),
    ].map { ($0.0.split(separator: "/"), $0.1) }

    /// The methods `path` answers (a GET route answers HEAD too), for a 405's `Allow`.
    static func methods(for path: String) -> String? {
        let parts = path.split(separator: "/")
        return routes.first { r in
            r.pattern.count == parts.count && zip(r.pattern, parts).allSatisfy { $0 == "*" || $0 == $1 }
        }.map { $0.methods.replacingOccurrences(of: "GET", with: "GET, HEAD") }
    }
}
