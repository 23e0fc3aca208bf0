import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
@testable import ActionLedger
@testable import LedgerServer

/// A real store in a temp dir with quinn's phone and laptop linked (and dana's tablet, in
/// the same org), a token for each scope, and the server over it with a fast hub.
// Unchecked: every stored property is set once in init and only read after; `temp` is never
// reopened here, so its ledger is the same Sendable `Ledger` for the harness's whole life.
final class ServerHarness: @unchecked Sendable {
    let temp: TempLedger
    let server: LedgerServer
    let phone: String, laptop: String, tablet: String, specialist: String, auditor: String
    let laptopTokenId: String

    var ledger: Ledger { temp.ledger }

    static func systemNow() -> Timestamp { Timestamp(milliseconds: Int64(Date().timeIntervalSince1970 * 1000)) }

    /// - parameter clock: the server's clock (the system's by default; a test moves its own).
    /// - parameter addressLimit: calls without a token per client address (per second, burst).
    init(keyedLaptop: TestDeviceKey? = nil, rateLimit: (rate: Double, burst: Double) = (1000, 1000), addressLimit: (rate: Double, burst: Double) = (1000, 1000),
         trustedProxies: [String] = [], idleTimeout: Duration = .seconds(60), connectionsPerAddress: Int = 128,
         clock: @escaping @Sendable () -> Timestamp = { ServerHarness.systemNow() }) throws {
        temp = try TempLedger()
        let l = temp.ledger!
        let now = Self.systemNow()
        try l.create(StoreCreation(testClock: false, demo: false), now: now)
        try l.run(.linkDevice(device: "phone-1", person: "quinn", org: "quinn-co", label: "iPhone", platform: .ios), now: now)
        if let keyedLaptop {
            try l.run(.linkKeyedDevice(device: "laptop-1", person: "quinn", org: "quinn-co", label: "MacBook", platform: .web,
                                       key: try keyedLaptop.key(.userVerification)), now: now)
        } else {
            try l.run(.linkDevice(device: "laptop-1", person: "quinn", org: "quinn-co", label: "MacBook", platform: .web), now: now)
        }
        try l.run(.linkDevice(device: "tablet-9", person: "dana", org: "quinn-co", label: "iPad", platform: .ios), now: now)
        let later = now.adding(milliseconds: Timestamp.day)
        func issue(_ scope: TokenScope, _ subject: String?) throws -> IssuedToken {
            try l.issueToken(org: "quinn-co", scope: scope, subject: subject, expiresAt: later, now: now)
        }
        phone = try issue(.device, "phone-1").secret
        let laptopToken = try issue(.device, "laptop-1")
        (laptop, laptopTokenId) = (laptopToken.secret, laptopToken.record.tokenId)
        tablet = try issue(.device, "tablet-9").secret
        specialist = try issue(.specialist, "content-onlyfans").secret
        auditor = try issue(.auditor, nil).secret
        var configuration = LedgerServer.Configuration(clock: clock)
        configuration.port = 0
        configuration.pollInterval = .milliseconds(10)
        configuration.heartbeat = .milliseconds(300)
        configuration.rateLimit = rateLimit.rate
        configuration.rateBurst = rateLimit.burst
        (configuration.addressRateLimit, configuration.addressRateBurst) = addressLimit
        configuration.trustedProxies = trustedProxies
        configuration.corsOrigins = ["https://app.example.com"]
        configuration.idleTimeout = idleTimeout
        configuration.maxConnectionsPerAddress = connectionsPerAddress
        server = try LedgerServer(ledger: l, storePath: temp.path, configuration: configuration)
    }

    /// Runs `body` against the real server on a loopback port (the hub runs too).
    func test(_ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        try await server.application().test(.live, body)
    }
}

extension TestClientProtocol {
    /// A request with a bearer token and an optional JSON body.
    func call(_ method: HTTPRequest.Method, _ uri: String, token: String? = nil, json: String? = nil,
              headers extra: HTTPFields = [:]) async throws -> TestResponse {
        var headers = extra
        if let token { headers[.authorization] = "Bearer \(token)" }
        if json != nil { headers[.contentType] = "application/json" }
        return try await execute(uri: uri, method: method, headers: headers, body: json.map { ByteBuffer(string: $0) })
    }
}

extension TestResponse {
    var text: String { String(buffer: body) }
    var json: JSON { (try? JSONParser.parse(Array(body.readableBytesView))) ?? .null }
    /// The problem document's `code`.
    var code: String? {
        guard case .object(let o) = json, case .string(let c)? = o["code"] else { return nil }
        return c
    }
}

extension JSON {
    subscript(path: String...) -> JSON? {
        var v: JSON? = self
        for k in path {
            guard case .object(let o)? = v else { return nil }
            v = o[k]
        }
        return v
    }
}

/// A proposal body as a specialist posts it.
func proposalJSON(_ id: String, stakes: String = "high", agent: String = "content-onlyfans", person: String = "quinn") -> String {
    """
    {"action_id":"\(id)","org":"quinn-co","person":"\(person)","specialist":{"name":"Sasha","agent":"\(agent)"},
     "surface":"onlyfans","kind":"publish_post","target":{"type":"account","id":"of:quinn"},"stakes":"\(stakes)",
     "confidence":0.7,"preview":{"text":"New set tonight","assets":3},"rationale":"Fans are online now"}
    """
}

/// Reads a whole streamed response on a connection of its own (the test client's one
/// connection would otherwise wait behind the open stream): returns once the server ends it.
func streamed(port: Int?, _ uri: String, token: String, headers extra: HTTPFields = [:]) async throws -> (HTTPResponse, String) {
    var headers = extra
    headers[.authorization] = "Bearer \(token)"
    let h = headers
    return try await TestClient.withClient(host: "localhost", port: port!, configuration: .init(timeout: .seconds(20))) { c in
        let r = try await c.get(uri, headers: h)
        return (r.head, r.body.map { String(buffer: $0) } ?? "")
    }
}
