import ActionLedger
import Foundation
import Hummingbird
import NIOCore

/// Who is calling: an operator token (``TokenScope``) or a device session.
public struct Identity: Sendable, Equatable {
    /// The token or session id (never the secret).
    public var id: String
    public var org: String
    public var scope: TokenScope
    /// The device (device scope) or agent (specialist scope); nil for an auditor.
    public var subject: String?
    /// A device's person.
    public var person: String?
    /// A device session's key term: the seq of the event that put its key in force (a
    /// rotation after it ends the session; one before it does not). Nil for tokens.
    public var keySeq: UInt64? = nil
    /// A device session's record key (the SHA-256 of its secret, never the secret): open
    /// streams re-check the session by it, one lookup instead of a scan of every session.
    var sessionHash: Digest? = nil
    /// A token's: the head seq when it was found live. The engine refuses a command of it
    /// if it was revoked since (``TokenAuthority``).
    var checkedThrough: UInt64? = nil

    /// The device this identity acts as.
    var device: String? { scope == .device ? subject : nil }

    /// What a command made under this identity carries for the writer to re-check.
    var authority: TokenAuthority? { checkedThrough.map { TokenAuthority(tokenId: id, checkedThrough: $0) } }
}

/// The request context of every route: the caller's identity once authenticated.
public struct APIContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// Set by ``AuthMiddleware`` from `Authorization: Bearer …` (or a stream ticket).
    public var identity: Identity?
    /// The connection's peer (a reverse proxy's, when one is in front).
    public let remoteAddress: SocketAddress?
    /// A HEAD request, answered by its GET route (``Router/getAndHead(_:use:)``): a route with
    /// side effects on GET (a stream's subscription, a ticket spent) must not have them.
    public var isHead = false
    /// Set by the server: the limit bodies are collected up to (413 beyond).
    public var maxUploadSize: Int { 1 << 20 }

    public init(source: Source) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }

    /// The path parameter `name`, percent-decoded (RFC 3986 §2.1: clients encode the `:`
    /// and `@` identifiers may hold, and an undecoded id would find nothing, so an audit
    /// listing would read as a clean record), and required to be an identifier.
    /// - throws: 400 `invalid_input` naming the parameter otherwise.
    func pathId(_ name: String) throws -> String {
        let raw = try parameters.require(name)
        guard let id = raw.removingPercentEncoding else { throw Problem.invalid("\(name): bad percent-encoding", field: name) }
        if let problem = Identifier.problem(id) { throw Problem.invalid("\(name) \(problem)", field: name) }
        return id
    }

    /// A path parameter that names free text (a specialist's name, an actor such as
    /// `specialist:Sasha Kim`, a surface: events.md allows 1–256 bytes), percent-decoded: no
    /// control characters; at most 1 KiB (a longer one names nothing anyway).
    /// - parameter most: the longest name taken, in characters (a proposal's actor,
    ///   `specialist:` and a name of 256, is longer than the 256 of other names).
    func pathText(_ name: String, most: Int = 256) throws -> String {
        // Decoded byte for byte: Foundation's decoder drops a leading U+FEFF, which would
        // answer for another name.
        guard let text = Self.percentDecoded(try parameters.require(name)) else {
            throw Problem.invalid("\(name): bad percent-encoding or not UTF-8", field: name)
        }
        guard (1...most).contains(text.unicodeScalars.count),
              !text.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7f...0x9f).contains($0.value) }) else {
            throw Problem.invalid("\(name): 1–\(most) characters of text, no control characters", field: name)
        }
        return text
    }

    /// `%XX` escapes decoded to bytes, the result validated as UTF-8; nil for a bad escape.
    static func percentDecoded(_ raw: String) -> String? {
        let input = Array(raw.utf8)
        var bytes: [UInt8] = []
        var i = 0
        while i < input.count {
            guard input[i] == UInt8(ascii: "%") else {
                bytes.append(input[i])
                i += 1
                continue
            }
            guard i + 2 < input.count, let byte = UInt8(String(decoding: input[i + 1...i + 2], as: UTF8.self), radix: 16) else {
                return nil
            }
            bytes.append(byte)
            i += 3
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// The caller, who must hold one of `scopes`.
    /// - throws: 401 without a live token; 403 `forbidden` for another scope.
    func require(_ scopes: TokenScope...) throws -> Identity {
        guard let identity else { throw Problem.unauthorized("a bearer token is required (Authorization: Bearer …)") }
        guard scopes.contains(identity.scope) else {
            throw Problem.forbidden("this endpoint needs a \(scopes.map(\.rawValue).joined(separator: " or ")) token; "
                + "this one is \(identity.scope.rawValue)")
        }
        return identity
    }
}

extension Router where Context == APIContext {
    /// Registers `handler` for GET, and for HEAD with ``APIContext/isHead`` set;
    /// ``ProblemMiddleware`` drops a HEAD's body and keeps GET's length.
    @discardableResult
    func getAndHead(_ path: RouterPath, use handler: @escaping @Sendable (Request, APIContext) async throws -> some ResponseGenerator) -> Self {
        get(path, use: handler)
        head(path) { request, context in
            var context = context
            context.isHead = true
            return try await handler(request, context)
        }
        return self
    }
}
