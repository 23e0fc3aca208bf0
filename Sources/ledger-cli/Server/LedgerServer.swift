import ActionLedger
import Foundation
import Hummingbird
import Logging
import NIOCore
import HummingbirdCore
import ServiceLifecycle

/// `ledger serve`: the HTTP and live-stream API over one ``Ledger`` (Specs/openapi.yaml).
///
/// Commands go to the engine's writer from Dispatch threads (``Blocking``), reads use
/// read-only transactions, and one ``EventHub`` tails the log for every stream.
public final class LedgerServer: Sendable {
    /// How to run the server.
    public struct Configuration: Sendable {
        public var host = "127.0.0.1"
        /// 0 picks a free port (printed on the first line of stdout).
        public var port = 8080
        /// Binding a non-loopback address needs this (a TLS-terminating proxy belongs in front).
        public var allowRemote = false
        /// How often the hub polls the log's head for events appended by anyone.
        public var pollInterval: Duration = .milliseconds(15)
        /// A comment line on idle streams, so proxies keep them open.
        public var heartbeat: Duration = .seconds(15)
        /// The engine clock: the system time, or `LEDGER_NOW` for a store on a test clock.
        public var clock: @Sendable () throws -> Timestamp
        /// Requests per second each token may make (its bucket holds `rateBurst`); 429 beyond.
        public var rateLimit: Double = 50
        public var rateBurst: Double = 100
        /// Requests per second each client address may make without a live token (challenges,
        /// sign-ins, pairing-code redemptions, health checks, refused secrets); 429 beyond.
        public var addressRateLimit: Double = 10
        public var addressRateBurst: Double = 20
        /// Reverse proxies in front (their addresses): calls from them are limited by the
        /// client address they append to `X-Forwarded-For`, not by the proxy's own.
        public var trustedProxies: [String] = []
        /// Web-companion origins allowed by CORS (e.g. `https://app.example.com`).
        public var corsOrigins: Set<String> = []
        /// A connection with no request under way (idle between requests, or stalled part-way
        /// through sending one) is closed after this long; a response being written, a live
        /// stream included, is never cut by it.
        public var idleTimeout: Duration = .seconds(60)
        /// Connections open at once; past it the server accepts no more until some close
        /// (they wait in the listen backlog). Below the process's open-file limit, with room
        /// for the store's files: at that limit the process itself fails.
        public var maxConnections = 4096
        /// Connections open at once from one client address (an IPv6 /64); more are closed at
        /// once. A trusted proxy's are not counted (it carries every client).
        public var maxConnectionsPerAddress = 128
        /// Device sessions' lifetime.
        public var sessionLifetime: Int64 = 30 * Timestamp.day
        /// How long a command's first response is kept for `Idempotency-Key` replays (ms); a
        /// replay after it still appends nothing (SessionStore+Responses.swift).
        public var responseRetention: Int64 = SessionStore.defaultResponseRetention

        public init(clock: @escaping @Sendable () throws -> Timestamp) { self.clock = clock }
    }

    let ledger: Ledger
    let configuration: Configuration
    let sessions: SessionStore
    let authenticator: Authenticator
    let hub: EventHub
    /// One request at a time per command id (``KeyedGate``).
    let commandGate = KeyedGate()
    let tickets = Locked([String: (identity: Identity, expiresAt: Timestamp)]())
    /// Session challenges: stateless until a signature verifies (Challenges.swift).
    let challenges = Challenges()
    let pairings = Locked([String: Pairing]())
    let logger: Logger
    let metrics = ServerMetrics()
    let limiter: RateLimiter
    let addressLimit: AddressLimit
    let connections: ConnectionCounts

    /// Opens the server's side of `ledger` (at `storePath`): its session file beside the store.
    public init(ledger: Ledger, storePath: String, configuration: Configuration) throws {
        if !configuration.allowRemote && !Self.isLoopback(configuration.host) {
            throw LedgerError(.invalidInput, "\(configuration.host) is not a loopback address: binding it needs --allow-remote "
                + "(and a TLS-terminating proxy in front)", details: ["field": "listen"])
        }
        self.ledger = ledger
        self.configuration = configuration
        limiter = RateLimiter(rate: configuration.rateLimit, burst: configuration.rateBurst)
        let proxies = try configuration.trustedProxies.map { text in
            guard let address = ClientAddress(text) else {
                throw LedgerError(.invalidInput, "--trusted-proxy \(text): expected an IPv4 or IPv6 address", details: ["field": "trusted-proxy"])
            }
            return address
        }
        addressLimit = AddressLimit(limiter: RateLimiter(rate: configuration.addressRateLimit, burst: configuration.addressRateBurst),
                                    trustedProxies: Set(proxies))
        for (name, value) in [("max-connections", configuration.maxConnections),
                              ("max-connections-per-address", configuration.maxConnectionsPerAddress)] where value < 1 {
            throw LedgerError(.invalidInput, "--\(name) \(value): expected at least 1", details: ["field": .string(name)])
        }
        // Beside the store itself (where a link --db leads): every name of it, one sessions file.
        sessions = try SessionStore(path: SessionStore.path(beside: ledger.environment.path), store: ledger.environment.path,
                                    responseRetention: configuration.responseRetention,
                                    now: try configuration.clock())
        authenticator = Authenticator(ledger: ledger, sessions: sessions)
        hub = try EventHub(ledger: ledger, pollInterval: configuration.pollInterval, heartbeat: configuration.heartbeat)
        var logger = Logger(label: "ledger.serve")
        logger.logLevel = .info
        self.logger = logger
        connections = ConnectionCounts(perAddress: configuration.maxConnectionsPerAddress, trustedProxies: Set(proxies),
                                       metrics: metrics, logger: logger)
    }

    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    /// The routes, with problem documents for every refusal and the caller's identity in the context.
    public func router() -> Router<APIContext> {
        // Every GET route answers HEAD as well (RFC 9110 §9.3.2: a general-purpose server must),
        // registered by `getAndHead`: the router's own HEAD-from-GET gave every HEAD
        // `Content-Length: 0`, whatever GET's length.
        let router = Router(context: APIContext.self)
        router.add(middleware: MetricsMiddleware(metrics: metrics))
        // CORS outside the problem documents, so refusals carry its headers too.
        router.add(middleware: CORSMiddleware(origins: configuration.corsOrigins))
        router.add(middleware: ProblemMiddleware(store: ledger.environment.path))
        router.add(middleware: JSONBodyMiddleware())
        router.add(middleware: AuthMiddleware(authenticator: authenticator, tokens: limiter, addresses: addressLimit, clock: configuration.clock))
        router.getAndHead("/healthz") { _, _ in
            LedgerServer.json(["status": "ok"])
        }
        router.getAndHead("/openapi.yaml") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/yaml"], body: .init(byteBuffer: ByteBuffer(bytes: OpenAPIDocument.bytes)))
        }
        router.getAndHead("/metrics") { _, _ in
            self.metrics.openStreams.record(self.hub.openStreams)
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                            body: .init(byteBuffer: ByteBuffer(string: self.metrics.text)))
        }
        addActionRoutes(router)
        addReadRoutes(router)
        addStreamRoutes(router)
        addSessionRoutes(router)
        addPairingRoutes(router)
        addKeyRotationRoutes(router)
        return router
    }

    /// The application: the HTTP server and the event hub, under one service group.
    /// - parameter onListening: called with the bound port once the server accepts connections.
    public func application(onListening: @escaping @Sendable (Int) -> Void = { _ in }) -> some ApplicationProtocol {
        let idle = TimeAmount(configuration.idleTimeout), connections = connections
        var app = Application(
            router: router(),
            server: .http1(configuration: .init(additionalChannelHandlers: [ConnectionGuardHandler(counts: connections, bodyDeadline: idle)],
                                                idleTimeout: idle)),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "ledger",
                                 availableConnectionsDelegate: MaximumAvailableConnections(configuration.maxConnections)),
            onServerRunning: { channel in onListening(channel.localAddress?.port ?? 0) },
            logger: logger)
        app.addServices(hub)
        return app
    }

    /// Runs until SIGTERM or SIGINT: then stops accepting, lets in-flight requests (and the
    /// commits they wait on) finish, and closes the streams. A client that stopped reading
    /// would hold its response open for ever, and the shutdown with it: after
    /// ``shutdownGrace`` what is still open is cancelled (a commit under way still finishes:
    /// the writer runs it to its end on its own thread).
    public func run(onListening: @escaping @Sendable (Int) -> Void) async throws {
        var group = ServiceGroupConfiguration(services: [application(onListening: onListening)],
                                              gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        group.maximumGracefulShutdownDuration = Self.shutdownGrace
        try await ServiceGroup(configuration: group).run()
    }

    /// How long a graceful shutdown waits for open responses before cancelling them.
    static let shutdownGrace: Duration = .seconds(10)

    static func json(_ value: JSON, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var headers = headers
        headers[.contentType] = "application/json"
        // Every answer is a person's actions or an audit record: no cache keeps a copy.
        headers[.cacheControl] = "no-store"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: value.serialized())))
    }

    /// The request's JSON body; nil when it has none.
    /// - throws: 413 past the context's limit, 415 unless it is declared JSON, 400 when it is
    ///   not JSON. A browser sends a `text/plain` or form body cross-origin without asking
    ///   first (no CORS preflight), so a body declared as anything but JSON is refused, not
    ///   parsed: the unauthenticated routes (pairing, sign-in) cannot be driven that way.
    /// - parameter depthLimit: the body's deepest nesting: a document's, or one more where
    ///   the body wraps a document (an outcome), so that both doors take the same outcomes.
    static func body(_ request: Request, _ context: APIContext, depthLimit: Int = JSONParser.maxDepth) async throws -> JSON? {
        var request = request
        // A declared length over the limit is refused before the body is read: a client that
        // waits on `Expect: 100-continue` learns it at once instead of uploading it all.
        if let declared = request.headers[.contentLength].flatMap(Int.init), declared > context.maxUploadSize {
            throw Problem(.contentTooLarge, "payload_too_large", "the body is over \(context.maxUploadSize) bytes")
        }
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: context.maxUploadSize)
        } catch is NIOTooManyBytesError {
            throw Problem(.contentTooLarge, "payload_too_large", "the body is over \(context.maxUploadSize) bytes")
        } catch {
            // What breaks while the body streams in is the client's (a malformed chunk, a
            // connection dropped part-way): a 400, never an internal error to alert on.
            context.logger.debug("unreadable request body", metadata: ["error": "\(error)"])
            throw Problem.invalid("the request body could not be read (malformed chunked encoding, or the connection ended part-way)")
        }
        guard buffer.readableBytes > 0 else { return nil }
        try requireJSON(request)
        return try JSONParser.parse(Array(buffer.readableBytesView), depthLimit: depthLimit)
    }

    func now() throws -> Timestamp { try configuration.clock() }

    /// `n` random bytes as hex (ids, nonces, secrets), from the system's CSPRNG.
    static func randomHex(_ n: Int) -> String {
        var g = SystemRandomNumberGenerator()
        return Hex.encode((0..<n).map { _ in UInt8.random(in: 0...255, using: &g) })
    }
}

extension LedgerServer {
    /// - throws: 415 `unsupported_media_type` unless the request declares a JSON body.
    static func requireJSON(_ request: Request) throws {
        let media = request.headers[.contentType]?.split(separator: ";").first
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        guard media == "application/json" || media.hasSuffix("+json") else {
            throw Problem(.unsupportedMediaType, "unsupported_media_type",
                          "the body must be JSON, sent as Content-Type: application/json" + (media.isEmpty ? "" : ", not \(media)"))
        }
    }
}

/// Refuses any request that carries a body not declared as JSON, on every route, before
/// it is read: also those that take no body (a browser could still send one cross-origin
/// without a preflight).
struct JSONBodyMiddleware: RouterMiddleware {
    typealias Context = APIContext

    func handle(_ request: Request, context: APIContext, next: (Request, APIContext) async throws -> Response) async throws -> Response {
        // A declared length only: an empty chunked body cannot be told from a full one
        // unread, and the routes that read theirs judge it then (``LedgerServer/body(_:_:)``).
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > 0 { try LedgerServer.requireJSON(request) }
        return try await next(request, context)
    }
}
