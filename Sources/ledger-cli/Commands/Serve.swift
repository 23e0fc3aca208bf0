import ActionLedger
import ArgumentParser
import Foundation
import LedgerServer

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the HTTP and live-stream API (Specs/openapi.yaml) until SIGTERM or SIGINT.",
        discussion: "The first line on stdout is `listening on http://HOST:PORT`. SIGTERM stops accepting, lets in-flight "
            + "commits finish and closes the streams.")

    @OptionGroup var global: GlobalOptions

    @Option(help: "HOST:PORT to bind (port 0 picks a free one).")
    var listen = "127.0.0.1:8080"

    @Flag(name: .customLong("allow-remote"), help: "Allow a non-loopback address (put a TLS-terminating proxy in front).")
    var allowRemote = false

    @Option(name: .customLong("cors-origin"), help: "A web-companion origin allowed by CORS (repeatable), e.g. https://app.example.com.")
    var corsOrigins: [String] = []

    @Option(name: .customLong("rate-limit"), help: "Requests per second each token may make (bursts of twice that); 429 beyond.")
    var rateLimit: Double = 50

    @Option(name: .customLong("address-rate-limit"),
            help: "Requests per second each client address may make without a live token (bursts of twice that); 429 beyond.")
    var addressRateLimit: Double = 10

    @Option(name: .customLong("trusted-proxy"),
            help: "A reverse proxy's IP address (repeatable): its calls are limited by the client it names in X-Forwarded-For.")
    var trustedProxies: [String] = []

    @Option(name: .customLong("max-connections"),
            help: "Connections open at once (default 4096, or fewer when the open-file limit is lower); more wait to be accepted.")
    var maxConnections: Int?

    @Option(name: .customLong("max-connections-per-address"),
            help: "Connections open at once from one client address or IPv6 /64 (default 128); a trusted proxy's are not counted.")
    var maxConnectionsPerAddress = 128

    /// Descriptors kept for the store, its lock and sessions files, logs and the runtime.
    static let reservedDescriptors = 256
    /// The fewest connections a server is started with.
    static let fewestConnections = 64

    func run() async throws {
        do {
            try Arguments.checkUTF8()
            try StandardStreams.requireApart(from: global.path)  // as every LedgerSubcommand does
            try await serve()
        } catch let error as LedgerError {
            throw Output.fail(error, json: global.json)
        } catch let error as LMDBError {
            throw Output.fail(error.ledgerError(store: global.path), json: global.json)
        }
    }

    private func serve() async throws {
        guard let colon = listen.lastIndex(of: ":"), let port = Int(listen[listen.index(after: colon)...]), (0...65535).contains(port) else {
            throw LedgerError(.invalidInput, "--listen: expected HOST:PORT such as 127.0.0.1:8080", details: ["field": "listen"])
        }
        var host = String(listen[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let ledger = try global.open(write: true)
        let testClock = try ledger.creation()?.testClock ?? false
        let path = global.path
        _ = try Clock.now(testClock: testClock, path: path)  // refuse a LEDGER_NOW the store does not honour, now
        var configuration = LedgerServer.Configuration(clock: { try Clock.now(testClock: testClock, path: path) })
        configuration.host = host
        configuration.port = port
        configuration.allowRemote = allowRemote
        for (name, value) in [("rate-limit", rateLimit), ("address-rate-limit", addressRateLimit)] where !(value > 0 && value.isFinite) {
            throw LedgerError(.invalidInput, "--\(name) must be a positive number of requests per second", details: ["field": .string(name)])
        }
        configuration.rateLimit = rateLimit
        // A bucket holds at least one call: below 0.5/s, one call, then one per 1/rate seconds.
        configuration.rateBurst = max(1, rateLimit * 2)
        configuration.addressRateLimit = addressRateLimit
        configuration.addressRateBurst = max(1, addressRateLimit * 2)
        configuration.trustedProxies = trustedProxies
        configuration.corsOrigins = Set(corsOrigins)
        // Every connection takes a descriptor; a process out of them dies (libdispatch traps),
        // so connections stop well short of the limit, raised first as far as it may go.
        let limit = Self.raiseOpenFileLimit(), allowed = limit - Self.reservedDescriptors
        // Too few to serve: one idle client would hold the only connection (say so, do not start).
        guard allowed >= Self.fewestConnections else {
            throw LedgerError(.invalidInput, "this process may open \(limit) files, \(Self.reservedDescriptors) kept for the store "
                + "and runtime: fewer than \(Self.fewestConnections) connections are left; raise ulimit -n", details: ["field": "max-connections"])
        }
        if let maxConnections, maxConnections > allowed {
            throw LedgerError(.invalidInput, "--max-connections \(maxConnections): this process may open \(limit) files, "
                + "\(Self.reservedDescriptors) kept for the store and runtime: at most \(allowed) (raise ulimit -n)",
                details: ["field": "max-connections"])
        }
        configuration.maxConnections = maxConnections ?? min(4096, allowed)
        configuration.maxConnectionsPerAddress = maxConnectionsPerAddress
        let server = try LedgerServer(ledger: ledger, storePath: path, configuration: configuration)
        let shown = host.contains(":") ? "[\(host)]" : host
        try await server.run { port in
            // Unbuffered: whoever started the server reads the port from this line at once. A
            // stdout that cannot take it is said on stderr; the server serves all the same.
            let line = Array("listening on http://\(shown):\(port)\n".utf8)
            if line.withUnsafeBytes({ Glibc.write(1, $0.baseAddress, $0.count) }) != line.count {
                Output.stderr("warning: could not write the listening line to stdout (\(String(cString: strerror(errno)))); "
                    + "listening on http://\(shown):\(port)")
            }
        }
    }

    /// Raises the soft open-file limit to the hard one; the soft limit now in force.
    static func raiseOpenFileLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return Int(clamping: limit.rlim_cur)
    }
}
