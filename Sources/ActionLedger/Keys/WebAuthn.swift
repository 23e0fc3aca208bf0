import Crypto
import Foundation

/// `store.relying_party` (event code 41): the WebAuthn relying party the store's
/// `webauthn` proofs are checked against (Specs/statements.md §2.4). The latest one is in
/// force; offline verifiers read it from the log like the engine.
public struct RelyingParty: Sendable, Equatable {
    /// The rpId: a registrable domain, e.g. `ledger.example.com`.
    public var rpId: String
    /// The origins a client may assert from, e.g. `https://ledger.example.com`.
    public var origins: [String]

    /// - throws: `invalid_input` for an rpId that is not a lowercase domain, or an origin
    ///   that is not `https://HOST[:PORT]` (or `http://localhost[:PORT]`).
    public init(rpId: String, origins: [String]) throws {
        let label = #"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?"#
        guard rpId.utf8.count <= 253, rpId.wholeMatch(of: try Regex("\(label)(\\.\(label))*")) != nil else {
            throw LedgerError(.invalidInput, "rp id \"\(rpId)\" is not a lowercase domain name", details: ["field": "rp_id"])
        }
        guard (1...16).contains(origins.count), Set(origins).count == origins.count else {
            throw LedgerError(.invalidInput, "give 1…16 distinct origins", details: ["field": "origins"])
        }
        for o in origins {
            let https = o.wholeMatch(of: try Regex("https://\(label)(\\.\(label))*(:[0-9]{1,5})?")) != nil
            let local = o.wholeMatch(of: /http:\/\/localhost(:[0-9]{1,5})?/) != nil
            guard o.utf8.count <= 256, https || local else {
                throw LedgerError(.invalidInput, "origin \"\(o)\" is not https://HOST[:PORT] (or http://localhost)",
                                  details: ["field": "origins"])
            }
        }
        self.rpId = rpId
        self.origins = origins
    }

    /// Refuses an origin whose port is no TCP port (0, past 65535, a leading zero): checked
    /// on new settings only, as stored ones must stay readable. A browser never sends such an
    /// origin, so no proof could ever match it.
    /// - throws: `invalid_input` naming `origins`.
    func requirePorts() throws {
        for o in origins {
            // What follows `scheme://`: HOST, or HOST:PORT (the init took only digits there).
            guard let scheme = o.range(of: "://"), let colon = o[scheme.upperBound...].lastIndex(of: ":") else { continue }
            let port = o[o.index(after: colon)...]
            guard !port.hasPrefix("0"), let n = Int(port), (1...65535).contains(n) else {
                throw LedgerError(.invalidInput, "origin \"\(o)\": the port must be 1…65535, with no leading zero",
                                  details: ["field": "origins"])
            }
            // A browser leaves the scheme's own port out of the origin it sends, and origins are compared as text.
            if n == (o.hasPrefix("https:") ? 443 : 80) {
                throw LedgerError(.invalidInput, "origin \"\(o)\": leave out the default port \(n); browsers send the origin without it",
                                  details: ["field": "origins"])
            }
        }
    }
}

/// A WebAuthn assertion as a `webauthn` proof carries it (Specs/statements.md §2.4): the
/// authenticator data and client data JSON exactly as the authenticator and browser made
/// them; its signature (kept raw r‖s beside it) is over `authenticatorData ‖ SHA-256(clientDataJSON)`.
public struct WebAuthnAssertion: Sendable, Equatable {
    public var authenticatorData: [UInt8]
    public var clientDataJSON: [UInt8]

    public init(authenticatorData: [UInt8], clientDataJSON: [UInt8]) {
        self.authenticatorData = authenticatorData
        self.clientDataJSON = clientDataJSON
    }

    static let maxAuthenticatorData = 1024, maxClientData = 2048

    /// The bytes the authenticator signed.
    public var signedBytes: [UInt8] {
        authenticatorData + Array(SHA256.hash(data: clientDataJSON))
    }

    /// The challenge a client sends for `statement`: base64url (no padding) of its SHA-256.
    public static func challenge(for statement: [UInt8]) -> String {
        Base64.encodeURL(Array(SHA256.hash(data: statement)))
    }

    /// Checks everything but the signature against `statement` and `rp`; returns whether
    /// the authenticator verified the user (the UV flag).
    /// - throws: `bad_proof` naming the `problem`: `relying_party`, `authenticator_data`,
    ///   `rp_id`, `user_presence`, `client_data`, `type`, `challenge`, `origin`.
    public func check(statement: [UInt8], rp: RelyingParty?) throws -> Bool {
        guard let rp else {
            throw Self.bad("the store has no relying party (ledger relying-party set): a webauthn proof cannot be checked",
                           "relying_party")
        }
        guard authenticatorData.count >= 37, authenticatorData.count <= Self.maxAuthenticatorData else {
            throw Self.bad("authenticator data must be 37…\(Self.maxAuthenticatorData) bytes", "authenticator_data")
        }
        guard Array(authenticatorData[0..<32]) == Array(SHA256.hash(data: Array(rp.rpId.utf8))) else {
            throw Self.bad("the authenticator data's rpIdHash is not SHA-256 of \(rp.rpId)", "rp_id")
        }
        let flags = authenticatorData[32]
        guard flags & 0x01 != 0 else { throw Self.bad("the authenticator data's UP flag is clear: no user presence", "user_presence") }
        guard clientDataJSON.count <= Self.maxClientData, let client = try? JSONParser.parse(clientDataJSON),
              case .string(let type)? = client["type"], case .string(let challenge)? = client["challenge"],
              case .string(let origin)? = client["origin"] else {
            throw Self.bad("clientDataJSON is not a JSON object with type, challenge and origin", "client_data")
        }
        guard type == "webauthn.get" else { throw Self.bad("clientDataJSON type is \"\(type.prefix(40))\", not webauthn.get", "type") }
        guard challenge == Self.challenge(for: statement) else {
            throw Self.bad("the challenge is not base64url(SHA-256) of the statement the engine expects", "challenge")
        }
        guard rp.origins.contains(origin) else {
            throw Self.bad("origin \"\(origin.prefix(100))\" is not one of the relying party's", "origin")
        }
        return flags & 0x04 != 0
    }

    static func bad(_ message: String, _ problem: String) -> LedgerError {
        LedgerError(.badProof, "webauthn: " + message, details: ["problem": .string(problem)])
    }
}

extension Base64 {
    /// base64url without padding (RFC 4648 §5), as WebAuthn spells challenges and buffers.
    static func encodeURL(_ bytes: [UInt8]) -> String {
        encode(bytes).replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// base64url, padding optional; nil when it is not.
    static func decodeURL(_ s: String) -> [UInt8]? {
        guard s.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "=") }) else { return nil }
        var t = s.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/").replacingOccurrences(of: "=", with: "")
        while t.count % 4 != 0 { t += "=" }
        return decode(t)
    }
}

extension DeviceKey {
    /// The level a signature proves over `statement`: a `p256` proof (no assertion) by the
    /// key's declared protection, a `webauthn` one by the authenticator's UV flag.
    /// - throws: `bad_proof` naming the `problem` (`signature`, or the assertion's, see
    ///   ``WebAuthnAssertion/check(statement:rp:)``).
    public func proofLevel(signature: [UInt8], webauthn: WebAuthnAssertion?, statement: [UInt8],
                           rp: RelyingParty?, platform: Platform, capped: Bool = true) throws -> ProofLevel {
        guard let a = webauthn else {
            guard verifies(signature, over: statement) else {
                throw LedgerError(.badProof, "the signature does not verify with the device's key over the statement",
                                  details: ["problem": "signature"])
            }
            return protection == .userVerification ? .signedUV : .signed
        }
        let uv = try a.check(statement: statement, rp: rp)
        guard verifies(signature, over: a.signedBytes) else {
            throw WebAuthnAssertion.bad("the signature does not verify with the device's key over authenticatorData ‖ "
                + "SHA-256(clientDataJSON)", "signature")
        }
        return uv && (!capped || Self.authenticatorSetsFlags(protection, platform)) ? .signedUV : .signed
    }

    /// Whether a WebAuthn UV flag from this key can count: the flag is only as good as the
    /// authenticator that sets it, and a key file (a `cli` device) or a key declared `none`
    /// (exportable) signs whatever authenticatorData it is handed, flags included. Such a
    /// key's assertion proves `signed`, as `key.cli_no_uv` keeps a key file from `signed_uv`.
    static func authenticatorSetsFlags(_ protection: KeyProtection, _ platform: Platform) -> Bool {
        protection != .none && platform != .cli
    }
}

extension LedgerError {
    /// `details.problem` of a `bad_proof`, `signature` when it names none.
    var problem: String {
        if case .string(let p)? = details["problem"] { return p }
        return "signature"
    }
}

extension MetaKey {
    /// `relying_party` → seq of the `store.relying_party` in force.
    static let relyingParty: [UInt8] = Array("relying_party".utf8)
}

extension LogReader {
    /// The WebAuthn relying party in force: the latest `store.relying_party`, if any.
    /// - throws: `corrupt_event` when the pointer names anything else.
    public func relyingParty() throws -> RelyingParty? {
        let seq = try dbs.meta.withValue(txn, key: MetaKey.relyingParty) { b in
            guard b.count == 8 else { throw Self.corruptRecord("meta", "relying_party", length: b.count, expected: 8) }
            return Keys.readU64(b)
        }
        guard let seq else { return nil }
        guard case .relyingParty(let rp)? = try event(seq)?.event.payload else {
            throw LedgerError(.corruptEvent, "meta record relying_party points to seq \(seq), not a store.relying_party",
                              details: ["index": "meta", "key": "relying_party", "seq": .number(Double(seq))])
        }
        return rp
    }
}
