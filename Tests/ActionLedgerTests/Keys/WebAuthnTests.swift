import Crypto
import Foundation
import Testing
@testable import ActionLedger

/// A software WebAuthn authenticator and browser: authenticatorData (rpIdHash, flags,
/// counter), clientDataJSON and a DER ECDSA signature over authData ‖ SHA-256(clientData).
struct SoftwareAuthenticator {
    let key = TestDeviceKey()
    var rpId = "ledger.example.com"
    var origin = "https://ledger.example.com"
    var type = "webauthn.get"
    /// UP (0x01) and UV (0x04).
    var flags: UInt8 = 0x05
    var challenge: String?
    /// The authenticator's signature counter, raised before each assertion as a counting
    /// authenticator does; copies share it (they are the same authenticator).
    var counter = SignCounter()
    /// Sent instead of the counter: 0 for an authenticator that does not count, or a clone's.
    var fixedCount: UInt32?

    /// One authenticator's counter (a reference: copies of the authenticator share it).
    final class SignCounter: @unchecked Sendable {
        // Guarded by `lock`.
        private var value: UInt32 = 0
        private let lock = NSLock()
        func next() -> UInt32 { lock.withLock { value += 1; return value } }
        var current: UInt32 { lock.withLock { value } }
    }

    func assert(_ statement: [UInt8]) throws -> (authenticatorData: [UInt8], clientDataJSON: [UInt8], der: [UInt8]) {
        let count = fixedCount ?? counter.next()
        let auth = Array(SHA256.hash(data: Array(rpId.utf8))) + [flags] + withUnsafeBytes(of: count.bigEndian) { Array($0) }
        let client: JSON = ["type": .string(type), "challenge": .string(challenge ?? WebAuthnAssertion.challenge(for: statement)),
                            "origin": .string(origin), "crossOrigin": false]
        let clientBytes = Array(client.serialized().utf8)
        let sig = try key.privateKey.signature(for: auth + Array(SHA256.hash(data: clientBytes)))
        return (auth, clientBytes, Array(sig.derRepresentation))
    }

    /// The proof a client sends: `{"format":"webauthn", …}` in base64url, read as the CLI reads `--proof`.
    func proof(_ statement: [UInt8], claimedAt: Timestamp) throws -> ProofInput {
        let a = try assert(statement)
        let json: JSON = ["format": "webauthn", "authenticator_data": .string(Base64.encodeURL(a.authenticatorData)),
                          "client_data_json": .string(Base64.encodeURL(a.clientDataJSON)), "signature": .string(Base64.encodeURL(a.der))]
        return try ProofInput(json: json, claimedAt: claimedAt)
    }
}

extension Ledger {
    @discardableResult
    func webauthn(_ command: Command, _ auth: SoftwareAuthenticator, commandId: String = CommandRequest.newCommandId(),
                  tamper: (inout Statement.Tap) -> Void = { _ in }) throws -> CommandResult {
        var statement = try self.statement(for: command, commandId: commandId, claimedAt: t0)
        tamper(&statement)
        return try execute(CommandRequest(command, commandId: commandId, now: t0, proof: try auth.proof(statement.bytes, claimedAt: t0)))
    }
}

/// `webauthn` proofs (Specs/statements.md §2.4) checked against the store's relying party.
@Suite struct WebAuthnTests {
    /// The strict policy, a relying party, and iphone linked with the authenticator's key.
    static func store(_ stakes: Stakes = .high) throws -> (TempLedger, SoftwareAuthenticator) {
        let t = try ProofPolicyTests.strictStore(stakes)
        let auth = SoftwareAuthenticator()
        try t.ledger.run(.setRelyingParty(try RelyingParty(rpId: auth.rpId, origins: [auth.origin, "https://app.example.com"])))
        var key = try auth.key.key(.device)
        key.trust = .firstUse
        try t.ledger.run(.linkKeyedDevice(device: "iphone", person: "quinn", org: "quinn-co", label: "iPhone", platform: .ios, key: key))
        return (t, auth)
    }

    @Test func aUVAssertionProvesTheHighApprove() throws {
        let (t, auth) = try Self.store()
        try t.ledger.webauthn(.tap(.review, actionId: "a1", device: "iphone"), auth)
        try t.ledger.webauthn(.tap(.confirm, actionId: "a1", device: "iphone"), auth)
        let r = try t.ledger.webauthn(.tap(.approve, actionId: "a1", device: "iphone"), auth)
        guard let event = r.events.first?.event, case .approved(let a) = event.payload, let p = a.proof else {
            Issue.record("no signed approval"); return
        }
        #expect(a.userVerified && p.level == .signedUV && p.webauthn != nil && p.userVerificationBasis == "webauthn_uv")
        #expect(event.proofSummary?.userVerificationBasis == "webauthn_uv")
        #expect(EventCodec.encode(try Event(json: event.json())) == EventCodec.encode(event))
        try TapRefusedTests.verifiesEverywhere(t)
    }

    @Test func everyMismatchIsABadProofAndWritesNothing() throws {
        let (t, auth) = try Self.store(.medium)
        let head = try TapRefusedTests.head(t)
        let review = Command.tap(.review, actionId: "a1", device: "iphone")
        var cases: [(String, SoftwareAuthenticator)] = []
        for (what, change) in [("rp_id", { (a: inout SoftwareAuthenticator) in a.rpId = "evil.example.com" }),
                               ("origin", { $0.origin = "https://evil.example.com" }),
                               ("challenge", { $0.challenge = WebAuthnAssertion.challenge(for: Array("other".utf8)) }),
                               ("type", { $0.type = "webauthn.create" }),
                               ("user_presence", { $0.flags = 0x04 })] as [(String, (inout SoftwareAuthenticator) -> Void)] {
            var a = auth
            change(&a)
            cases.append((what, a))
        }
        for (what, a) in cases {
            let e = try requireLedgerError(.badProof, what) { try t.ledger.webauthn(review, a) }
            #expect(e.details["problem"] == .string(what), "\(what): \(e)")
        }
        // A statement for another action, step or device: the challenge is not the one expected.
        let tampers: [(String, (inout Statement.Tap) -> Void)] = [
            ("another action", { $0.actionId = "a9" }), ("another step", { $0.step = .approve }), ("another device", { $0.device = "laptop" }),
        ]
        for (what, tamper) in tampers {
            let e = try requireLedgerError(.badProof, what) { try t.ledger.webauthn(review, auth, tamper: tamper) }
            #expect(e.details["problem"] == "challenge", "\(what)")
        }
        // A proof replayed with a new command id.
        let statement = try t.ledger.statement(for: review, commandId: "cmd-1", claimedAt: t0)
        let proof = try auth.proof(statement.bytes, claimedAt: t0)
        try t.ledger.execute(CommandRequest(review, commandId: "cmd-1", now: t0, proof: proof))
        let replayed = try requireLedgerError(.badProof) {
            try t.ledger.execute(CommandRequest(.tap(.approve, actionId: "a1", device: "iphone"), commandId: "cmd-2", now: t0, proof: proof))
        }
        #expect(replayed.details["problem"] == "challenge")
        #expect(try TapRefusedTests.head(t) == head + 1)
    }

    @Test func withoutARelyingPartyAWebAuthnProofIsRefused() throws {
        let t = try keyedStore()
        let auth = SoftwareAuthenticator()
        try t.ledger.run(.linkKeyedDevice(device: "iphone", person: "quinn", org: "quinn-co", label: "iPhone", platform: .ios,
                                          key: try auth.key.key(.device)))
        let e = try requireLedgerError(.badProof) { try t.ledger.webauthn(.tap(.review, actionId: "a1", device: "iphone"), auth) }
        #expect(e.details["problem"] == "relying_party")
        try requireLedgerError(.invalidInput) { try RelyingParty(rpId: "Not A Domain", origins: ["https://x.example"]) }
        try requireLedgerError(.invalidInput) { try RelyingParty(rpId: "x.example", origins: ["ftp://x.example"]) }
    }

    /// A key file (a `cli` device) or a key declared `none` signs whatever authenticatorData
    /// it is handed, the UV flag included: its assertion proves `signed`, never `signed_uv`
    /// (a laptop's key file took the strict policy's high approve by setting the flag).
    @Test func aKeyThatSetsItsOwnFlagsNeverProvesUserVerification() throws {
        for (platform, protection) in [(Platform.cli, KeyProtection.device), (.web, .none)] {
            let t = try ProofPolicyTests.strictStore(.high)
            let auth = SoftwareAuthenticator()
            try t.ledger.run(.setRelyingParty(try RelyingParty(rpId: auth.rpId, origins: [auth.origin])))
            try t.ledger.run(.linkKeyedDevice(device: "laptop", person: "quinn", org: "quinn-co", label: "Laptop", platform: platform,
                                              key: try auth.key.key(protection)))
            let review = try t.ledger.webauthn(.tap(.review, actionId: "a1", device: "laptop"), auth)
            guard case .reviewed(let r)? = review.events.first?.event.payload else { Issue.record("no review"); return }
            #expect(r.proof?.level == .signed, "\(platform) \(protection)")
            try t.ledger.webauthn(.tap(.confirm, actionId: "a1", device: "laptop"), auth)
            let e = try requireLedgerError(.proofRequired, "\(platform)") {
                try t.ledger.webauthn(.tap(.approve, actionId: "a1", device: "laptop"), auth)
            }
            #expect(e.details["level"] == "signed" && e.details["required"] == "signed_uv")
            try TapRefusedTests.verifiesEverywhere(t)
        }
    }

    /// A level an earlier build recorded from such a key by the flag alone (signed_uv) stays
    /// verifiable: the verifiers accept it, as that build did; the engine no longer records it.
    @Test func aLevelAnEarlierBuildRecordedStaysVerifiable() throws {
        let t = try keyedStore(stakes: .low)
        let auth = SoftwareAuthenticator()
        try t.ledger.run(.setRelyingParty(try RelyingParty(rpId: auth.rpId, origins: [auth.origin])))
        try t.ledger.run(.linkKeyedDevice(device: "laptop", person: "quinn", org: "quinn-co", label: "Laptop", platform: .cli,
                                          key: try auth.key.key(.device)))
        try t.ledger.webauthn(.tap(.approve, actionId: "a1", device: "laptop"), auth)
        var events = try t.ledger.read { r in try (1...(try r.head().seq)).map { try r.event($0)!.event } }
        guard case .approved(var a) = events[events.count - 1].payload, var p = a.proof, p.level == .signed else {
            Issue.record("not a signed approval"); return
        }
        p.level = .signedUV
        a.proof = p
        a.userVerified = true
        events[events.count - 1].payload = .approved(a)
        let earlier = try TempLedger()
        try earlier.ledger.append(verbatim: events.map { ($0, nil) })
        _ = try earlier.ledger.verifyProofs()
        let (_, python) = try earlier.exportAndVerifyIndependently()
        #expect(python.status == 0, "\(python.stdout)\(python.stderr)")
    }

    /// UV clear: the assertion verifies at level signed, so the strict high approve refuses
    /// it — an authenticated refusal, recorded with its webauthn proof.
    @Test func anAssertionWithoutUVDoesNotMeetSignedUV() throws {
        let (t, auth) = try Self.store()
        try t.ledger.webauthn(.tap(.review, actionId: "a1", device: "iphone"), auth)
        try t.ledger.webauthn(.tap(.confirm, actionId: "a1", device: "iphone"), auth)
        var noUV = auth
        noUV.flags = 0x01
        let e = try requireLedgerError(.proofRequired) { try t.ledger.webauthn(.tap(.approve, actionId: "a1", device: "iphone"), noUV) }
        #expect(e.details["level"] == "signed" && e.details["required"] == "signed_uv")
        guard case .tapRefused(let r)? = try t.ledger.read({ try $0.event($0.head().seq)?.event.payload }) else {
            Issue.record("not recorded"); return
        }
        #expect(r.proof.webauthn != nil && r.proof.level == .signed && r.code == "proof_required")
        try TapRefusedTests.verifiesEverywhere(t)
    }

    /// A re-chained export whose assertion was altered (another origin in clientDataJSON)
    /// is refused by the engine's checks and by verify_export.py.
    @Test func anAlteredAssertionIsCaughtOffline() throws {
        let (t, auth) = try Self.store(.low)
        try t.ledger.webauthn(.tap(.approve, actionId: "a1", device: "iphone"), auth)
        var events = try t.ledger.read { r in try (1...(try r.head().seq)).map { try r.event($0)!.event } }
        let last = events.count - 1
        guard case .approved(var a) = events[last].payload, var p = a.proof, var w = p.webauthn else { Issue.record("no proof"); return }
        w.clientDataJSON = Array(String(decoding: w.clientDataJSON, as: UTF8.self)
            .replacingOccurrences(of: "ledger.example.com", with: "app.example.com").utf8)
        p.webauthn = w
        a.proof = p
        events[last].payload = .approved(a)
        let f = try TempLedger()
        try f.ledger.append(verbatim: events.map { ($0, nil) })
        let e = try requireLedgerError(.integrityFailure) { try f.ledger.verifyProofs() }
        #expect(e.details["problem"] == "challenge" || e.details["problem"] == "signature", "\(e)")
        #expect(try f.ledger.replayDecisions().mismatch?.seq == UInt64(last + 1))
        let py = try f.exportAndVerifyIndependently().python
        #expect(py.status == 1 && py.stdout.hasPrefix("seq \(last + 1): proof signature"), "\(py.stdout)\(py.stderr)")
    }
}

extension WebAuthnTests {
    /// Through the CLI: the relying party is set and shown, `statement --json` gives the
    /// challenge, and a tap takes the assertion as `--proof -`.
    @Test func theCLITakesAWebAuthnProof() throws {
        let store = try ProcessFixture("webauthn")
        func ledger(_ args: String..., stdin: String? = nil) throws -> LedgerProcess.Output {
            try store.ledger(args, stdin: stdin)
        }
        let auth = SoftwareAuthenticator()
        let pub = store.path("k.pub")
        try Data(auth.key.privateKey.publicKey.pemRepresentation.utf8).write(to: URL(fileURLWithPath: pub))
        #expect(try ledger("relying-party", "set", "--rp-id", "Bad Domain", "--origin", auth.origin).status == 2)
        #expect(try ledger("relying-party", "set", "--rp-id", auth.rpId, "--origin", auth.origin).status == 0)
        #expect(try ledger("relying-party", "show", "--json").stdout.contains(#""rp_id":"ledger.example.com""#))
        #expect(try ledger("devices", "link", "iphone", "--person", "quinn", "--org", "quinn-co", "--label", "iPhone",
                           "--platform", "ios", "--public-key", pub, "--key-protection", "device").status == 0)
        #expect(try ledger("propose", "-", stdin: CLITests.proposalJSON).status == 0)
        let s = try JSONParser.parse(try ledger("statement", "p1", "--step", "review", "--device", "iphone", "--command-id", "cmd-w",
                                                "--json").stdout)
        let bytes = try #require(Hex.decode(s["statement_hex"]?.stringValue ?? ""))
        #expect(s["webauthn_challenge"]?.stringValue == WebAuthnAssertion.challenge(for: bytes))
        let a = try auth.assert(bytes)
        let proof = #"{"format":"webauthn","authenticator_data":"\#(Base64.encodeURL(a.authenticatorData))","client_data_json":"\#(Base64.encodeURL(a.clientDataJSON))","signature":"\#(Base64.encodeURL(a.der))"}"#
        let r = try ledger("review", "p1", "--device", "iphone", "--proof", "-", "--claimed-at", "2026-11-22T09:00:00Z",
                           "--command-id", "cmd-w", "--json", stdin: proof)
        #expect(r.status == 0 && r.stdout.contains(#""format":"webauthn""#) && r.stdout.contains(#""level":"signed_uv""#), "\(r.stderr)")
        #expect(try ledger("verify", "--deep").status == 0)
        #expect(try ledger("audit", "replay").status == 0)
        #expect(try ledger("show", "p1").stdout.contains("[proof signed_uv, key "))
    }
}
