import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
@testable import ActionLedger
@testable import LedgerServer

/// Calls without a live token (challenges, sign-ins, pairing-code redemptions, refused
/// secrets) are limited per client address; tokens keep their own buckets.
@Suite struct AddressLimitTests {
    /// Three calls per address, refilled too slowly to matter within a test.
    static let three = (rate: 0.001, burst: 3.0)

    /// Holding tokens does not buy faster pairing-code guesses: every redemption is charged
    /// to the address too, whichever token sent it, before the code is judged, so once the
    /// bucket is empty even the right code is refused (a 429 tells nothing of the code).
    @Test func pairingCodeRedemptionsAreChargedToTheAddressWhateverTheToken() async throws {
        let key = TestDeviceKey()
        let h = try ServerHarness(keyedLaptop: key, addressLimit: Self.three)
        try await h.test { client in
            let opened = try await client.call(.post, "/v1/devices/pairing", token: h.laptop)
            guard case .string(let code)? = opened.json["code"] else { Issue.record("no code: \(opened.text)"); return }
            for token in [h.specialist, h.phone, h.auditor] {
                let wrong = code == "12345678" ? "12345679" : "12345678"
                let refused = try await client.call(.post, "/v1/devices", token: token, json: #"{"code": "\#(wrong)"}"#)
                #expect(refused.status == .unauthorized)
            }
            let right = #"{"code": "\#(code)", "device": "new-1", "platform": "ios", "public_key": "\#(Data(TestDeviceKey().spki).base64EncodedString())"}"#
            let limited = try await client.call(.post, "/v1/devices", token: h.tablet, json: right)
            #expect(limited.status == .tooManyRequests && limited.text.contains("pairing-code redemptions"), "\(limited.text)")
            // The tokens' own calls are not limited by it.
            #expect(try await client.call(.get, "/v1/today", token: h.phone).status == .ok)
        }
    }

    @Test func unauthenticatedCallsAreLimitedPerClientAddress() async throws {
        let h = try ServerHarness(addressLimit: Self.three)
        try await h.test { client in
            let challenge = try await client.call(.post, "/v1/sessions/challenge", json: #"{"device": "phone-1"}"#)
            #expect(challenge.status == .created)  // issued for any device id
            let signIn = try await client.call(.post, "/v1/sessions", json: #"{"challenge_id": "chl-x", "signature": "AA=="}"#)
            #expect(signIn.status == .unauthorized)
            let pairing = try await client.call(.post, "/v1/devices", json: #"{"code": "12345678"}"#)
            #expect(pairing.status == .unauthorized)
            // The bucket is empty: refused before the body is read or the device looked up.
            let limited = try await client.call(.post, "/v1/sessions/challenge", json: #"{"device": "phone-1"}"#)
            #expect(limited.status == .tooManyRequests && limited.code == "rate_limited")
            #expect(limited.headers[.contentType] == "application/problem+json")
            #expect(Int(limited.headers[.retryAfter] ?? "") ?? 0 >= 1)
            #expect(try await client.call(.post, "/v1/devices", json: #"{"code": "12345678"}"#).status == .tooManyRequests)
            // Guessing secrets spends from the same bucket.
            #expect(try await client.call(.get, "/v1/today", token: "alt_guess").status == .tooManyRequests)
            // A live token has a bucket of its own.
            #expect(try await client.call(.get, "/v1/today", token: h.phone).status == .ok)
            // A stream ticket (minted under the token's limit) opens its stream; a refused one is charged.
            let ticket = try await client.call(.post, "/v1/streams/tickets", token: h.phone)
            guard case .string(let t)? = ticket.json["ticket"] else { Issue.record("no ticket: \(ticket.text)"); return }
            let catchUp = try await client.call(.get, "/v1/events?from=1&ticket=\(t)", headers: [.accept: "application/x-ndjson"])
            #expect(catchUp.status == .ok)
            let guessed = try await client.call(.get, "/v1/events?from=1&ticket=ast_guess", headers: [.accept: "application/x-ndjson"])
            #expect(guessed.status == .tooManyRequests)
            // X-Forwarded-For from a peer that is no trusted proxy is the client's own claim: ignored.
            let spoofed = try await client.call(.post, "/v1/sessions/challenge", json: #"{"device": "phone-1"}"#,
                                                headers: [.xForwardedFor: "203.0.113.7"])
            #expect(spoofed.status == .tooManyRequests)
        }
    }

    @Test func behindATrustedProxyEachForwardedClientHasItsOwnBucket() async throws {
        let h = try ServerHarness(addressLimit: Self.three, trustedProxies: ["127.0.0.1"])
        try await h.test { client in
            var statuses: [HTTPResponse.Status] = []
            for _ in 0..<4 { statuses.append(try await Self.challenge(client, from: "203.0.113.7")) }
            #expect(statuses == [.created, .created, .created, .tooManyRequests])
            let other = try await Self.challenge(client, from: "198.51.100.2")
            #expect(other == .created)
            // What the client wrote left of its own address proves nothing.
            let claimed = try await Self.challenge(client, from: "198.51.100.99, 203.0.113.7")
            #expect(claimed == .tooManyRequests)
            // One IPv6 host holds a /64: its addresses share a bucket.
            statuses = []
            for n in 1...3 { statuses.append(try await Self.challenge(client, from: "2001:db8:5:6::\(n)")) }
            statuses.append(try await Self.challenge(client, from: "[2001:db8:5:6:ffff::9]:443"))
            #expect(statuses == [.created, .created, .created, .tooManyRequests])
        }
    }

    /// A session challenge for the (keyless) phone, forwarded for `address`: issued (201) unless limited.
    static func challenge(_ client: some TestClientProtocol, from address: String) async throws -> HTTPResponse.Status {
        try await client.call(.post, "/v1/sessions/challenge", json: #"{"device": "phone-1"}"#, headers: [.xForwardedFor: address]).status
    }

    @Test func clientAddressesParseAndGroup() {
        #expect(ClientAddress("203.0.113.7")?.bucket == "203.0.113.7")
        #expect(ClientAddress(" 203.0.113.7:8443 ")?.bucket == "203.0.113.7")
        #expect(ClientAddress("::ffff:203.0.113.7")?.bucket == "203.0.113.7")
        #expect(ClientAddress("2001:db8:1:2::1")?.bucket == "2001:db8:1:2::/64")
        #expect(ClientAddress("[2001:db8:1:2:ffff::9]")?.bucket == ClientAddress("2001:db8:1:2::1")?.bucket)
        #expect(ClientAddress("2001:db8:1:3::1")?.bucket != ClientAddress("2001:db8:1:2::1")?.bucket)
        #expect(ClientAddress("example.com") == nil && ClientAddress("") == nil && ClientAddress("1.2.3") == nil)
        let proxy = ClientAddress("10.0.0.5")!, trusted: Set = [proxy]
        #expect(ClientAddress.client(peer: proxy, forwardedFor: "198.51.100.1, 10.0.0.5", trusted: trusted)?.bucket == "198.51.100.1")
        // A malformed entry ends the walk at the last address read (the proxy's own here).
        #expect(ClientAddress.client(peer: proxy, forwardedFor: "unknown", trusted: trusted) == proxy)
        #expect(ClientAddress.client(peer: proxy, forwardedFor: nil, trusted: trusted) == proxy)
    }

    /// The limiter remembers at most `capacity` keys; a forgotten key returns with a full bucket.
    @Test func theLimiterRemembersABoundedNumberOfKeys() {
        let limiter = RateLimiter(rate: 1, burst: 1, capacity: 4)
        let start = ContinuousClock.now
        #expect(limiter.take("a", at: start) == nil)
        #expect(limiter.take("a", at: start) == 1)
        #expect(limiter.take("a", at: start.advanced(by: .seconds(1))) == nil)  // refilled after a second
        for n in 0..<100 { _ = limiter.take("k\(n)", at: start.advanced(by: .seconds(1))) }
        #expect(limiter.remembered <= 4)
        #expect(limiter.take("a", at: start.advanced(by: .seconds(1))) == nil)  // forgotten: a full bucket again
        // A key in use survives the generation it was last seen in.
        #expect(limiter.take("b", at: start) == nil)
        _ = limiter.take("c", at: start)
        #expect(limiter.take("b", at: start) == 1)
    }
}
