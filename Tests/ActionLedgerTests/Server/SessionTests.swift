import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
@testable import ActionLedger
@testable import LedgerServer

/// Device sessions: a keyed device signs a challenge instead of carrying a copied secret;
/// revoking a device through the API needs its person's user-verified key.
@Suite struct SessionTests {
    /// Asks for a challenge for `device` and signs it with `key`: the body of the follow-up request.
    static func signedChallenge(_ client: some TestClientProtocol, _ device: String, _ pem: String,
                                purpose: String = "session", target: String? = nil) async throws -> String {
        let body = target.map { #"{"device": "\#(device)", "purpose": "\#(purpose)", "target": "\#($0)"}"# }
            ?? #"{"device": "\#(device)", "purpose": "\#(purpose)"}"#
        let challenge = try await client.call(.post, "/v1/sessions/challenge", json: body)
        guard case .string(let id)? = challenge.json["challenge_id"], case .string(let hex)? = challenge.json["statement_hex"],
              let statement = Hex.decode(hex) else { throw LedgerError(.invalidInput, "no challenge: \(challenge.text)") }
        // What statements.md §3.4 documents, rebuilt as a client should before signing.
        let lines = String(decoding: statement, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let hex64 = /[0-9a-f]{64}/
        guard lines.count == 6, lines[0] == "actionledger-session-v1", lines[1].hasPrefix("store_id: "),
              lines[1].dropFirst(10).wholeMatch(of: hex64) != nil, lines[2] == "device: \(device)",
              lines[3] == "purpose: " + (purpose == "revoke" ? "revoke:\(target ?? "")" : purpose),
              lines[4].hasPrefix("challenge: "), lines[4].dropFirst(11).wholeMatch(of: hex64) != nil, lines[5].isEmpty else {
            throw LedgerError(.invalidInput, "the challenge is not statements.md §3.4's form: \(lines)")
        }
        let signature = Data(try P256Signature.sign(statement, pemPrivateKey: pem).signature).base64EncodedString()
        return #"{"challenge_id": "\#(id)", "signature": "\#(signature)"}"#
    }

    @Test func aKeyedDeviceSignsInAndItsSessionActsAsIt() async throws {
        let key = TestDeviceKey()
        let h = try ServerHarness(keyedLaptop: key)
        let pem = key.pem
        try await h.test { client in
            // Challenges are issued alike for a device without a key, an unknown one and a keyed
            // one (nothing about devices is told to a caller who proved nothing); only the key answers.
            for device in ["phone-1", "no-such-device", "laptop-1"] {
                #expect(try await client.call(.post, "/v1/sessions/challenge", json: #"{"device": "\#(device)"}"#).status == .created)
            }
            for device in ["phone-1", "no-such-device"] {
                let attempt = try await client.call(.post, "/v1/sessions", json: try await Self.signedChallenge(client, device, pem))
                #expect(attempt.status == .unauthorized, "\(device): \(attempt.text)")
            }
            let body = try await Self.signedChallenge(client, "laptop-1", pem)
            let session = try await client.call(.post, "/v1/sessions", json: body)
            #expect(session.status == .created)
            // The store id it names is the one every tap statement binds (statements.md §2).
            let challenge = try await client.call(.post, "/v1/sessions/challenge", json: #"{"device": "laptop-1"}"#)
            let storeId = try #require(try h.ledger.read { try $0.storeId() })
            #expect(challenge.text.contains(Hex.encode(Array("store_id: \(storeId.hex)".utf8))))
            // A challenge answers once.
            #expect(try await client.call(.post, "/v1/sessions", json: body).status == .unauthorized)
            guard case .string(let token)? = session.json["token"] else { Issue.record("no token"); return }
            #expect(token.hasPrefix("als_"))
            let devices = try await client.call(.get, "/v1/devices", token: token)
            #expect(devices.status == .ok && devices.text.contains("phone-1") && !devices.text.contains("tablet-9"))
            let forged = try await client.call(.post, "/v1/sessions",
                                               json: try await Self.signedChallenge(client, "laptop-1", TestDeviceKey().pem))
            #expect(forged.status == .unauthorized, "\(forged.text)")
        }
    }

    @Test func signOutEverywhereElseEndsTheOtherSessionsOnly() async throws {
        let old = TestDeviceKey(), key = TestDeviceKey()
        let h = try ServerHarness(keyedLaptop: old)
        let oldPem = old.pem, pem = key.pem
        var newKey = try key.key(.userVerification)
        newKey.trust = .introducedBy(device: "laptop-1",
                                     signature: try old.sign(try h.ledger.rotationStatement(device: "laptop-1", key: newKey, signedBy: "laptop-1")))
        let rotation = Command.rotateDeviceKey(device: "laptop-1", key: newKey)
        try await h.test { client in
            // Two sessions of the old key, which its rotation ends: not counted as signed out below.
            for _ in 0..<2 {
                let session = try await client.call(.post, "/v1/sessions", json: try await Self.signedChallenge(client, "laptop-1", oldPem))
                #expect(session.status == .created)
            }
            try h.ledger.run(rotation, now: ServerHarness.systemNow())
            var tokens: [String] = []
            for _ in 0..<2 {
                let session = try await client.call(.post, "/v1/sessions", json: try await Self.signedChallenge(client, "laptop-1", pem))
                guard case .string(let t)? = session.json["token"] else { Issue.record("no session"); return }
                tokens.append(t)
            }
            // A challenge authorises only what it was made for: a sign-in's, used here, is 401.
            let wrong = try await client.call(.post, "/v1/sessions/sign-out-others", token: tokens[1],
                                              json: try await Self.signedChallenge(client, "laptop-1", pem))
            #expect(wrong.status == .unauthorized, "\(wrong.text)")
            let body = try await Self.signedChallenge(client, "laptop-1", pem, purpose: "sign_out_others")
            let ended = try await client.call(.post, "/v1/sessions/sign-out-others", token: tokens[1], json: body)
            #expect(ended.status == .ok && ended.json["sessions_ended"] == .number(1))
            #expect(try await client.call(.get, "/v1/today", token: tokens[0]).status == .unauthorized)
            #expect(try await client.call(.get, "/v1/today", token: tokens[1]).status == .ok)
        }
    }

    @Test func revokingADeviceNeedsTheUserVerifiedKeyOfItsPerson() async throws {
        let key = TestDeviceKey()
        let h = try ServerHarness(keyedLaptop: key)
        let pem = key.pem, fingerprint = try key.key(.userVerification).fingerprint
        try await h.test { client in
            let unsigned = try await client.call(.post, "/v1/devices/phone-1/revoke", token: h.laptop, json: "{}")
            #expect(unsigned.status == .badRequest)
            let body = try await Self.signedChallenge(client, "laptop-1", pem, purpose: "revoke", target: "phone-1")
            // The phone's token cannot use the laptop's signature.
            #expect(try await client.call(.post, "/v1/devices/phone-1/revoke", token: h.phone, json: body).status == .forbidden)
            let again = try await Self.signedChallenge(client, "laptop-1", pem, purpose: "revoke", target: "phone-1")
            let revoked = try await client.call(.post, "/v1/devices/phone-1/revoke", token: h.laptop, json: again)
            #expect(revoked.status == .ok)
            #expect(try h.ledger.read { try $0.deviceState("phone-1")?.revokedAt } != nil)
            // The audit shows which device she revoked it from: the one whose key signed the challenge.
            let recorded = try h.ledger.read { r in try r.event(try r.head().seq)?.event }
            #expect(recorded?.type == .deviceRevoked && recorded?.device == "laptop-1" && recorded?.actor == "quinn")
            // With the signature that proved it: the engine and every verifier check it again.
            guard case .deviceRevoked(let r)? = recorded?.payload else { return }
            #expect(r.proof?.keyFingerprint == fingerprint)
            #expect(try h.ledger.verifyProofs() >= 1)
            #expect(try h.ledger.replayDecisions().mismatch == nil)
            #expect(try await client.call(.get, "/v1/today", token: h.phone).code == "device_revoked")
        }
    }
}


/// Enrolment: the laptop (keyed) opens a pairing code, the new phone posts its key with it,
/// the laptop signs the link statement, and the phone is linked as introduced by the laptop.
@Suite struct PairingTests {
    @Test func aKeyedDeviceIntroducesANewOne() async throws {
        let laptopKey = TestDeviceKey()
        let h = try ServerHarness(keyedLaptop: laptopKey)
        let laptopPem = laptopKey.pem, newKey = TestDeviceKey()
        let newPublic = Data(newKey.spki).base64EncodedString(), newPem = newKey.pem
        let laptopPublic = Data(laptopKey.spki).base64EncodedString(), newPrint = try newKey.key().fingerprint.hex
        try await h.test { client in
            // The unkeyed phone cannot vouch for anyone.
            #expect(try await client.call(.post, "/v1/devices/pairing", token: h.phone).code == "bad_proof")
            let opened = try await client.call(.post, "/v1/devices/pairing", token: h.laptop)
            guard case .string(let code)? = opened.json["code"] else { Issue.record("no code: \(opened.text)"); return }
            // Its pairing device sees the code open and nothing to sign yet; another device sees no such code.
            let waiting = try await client.call(.get, "/v1/devices/pairing/\(code)", token: h.laptop)
            #expect(waiting.status == .ok && waiting.json["device"] == .null && waiting.json["statement_hex"] == .null, "\(waiting.text)")
            #expect(try await client.call(.get, "/v1/devices/pairing/\(code)", token: h.phone).status == .notFound)
            // Another device's key is refused before the code is spent on it (key.one_device).
            let reused = try await client.call(.post, "/v1/devices",
                                               json: #"{"code": "\#(code)", "device": "iphone-3", "platform": "ios", "public_key": "\#(laptopPublic)"}"#)
            #expect(reused.status == .badRequest && reused.text.contains("another device's"), "\(reused.text)")
            let posted = try await client.call(.post, "/v1/devices", json: """
                {"code": "\(code)", "device": "iphone-2", "label": "New iPhone", "platform": "ios",
                 "public_key": "\(newPublic)", "key_protection": "user-verification"}
                """)
            #expect(posted.status == .accepted)
            guard case .string(let hex)? = posted.json["statement_hex"], let statement = Hex.decode(hex) else { Issue.record("no statement"); return }
            // The pairing device reads what it vouches for: the same statement, the new key named.
            let view = try await client.call(.get, "/v1/devices/pairing/\(code)", token: h.laptop)
            #expect(view.json["statement_hex"] == .string(hex) && view.json["key_fingerprint"] == .string(newPrint)
                    && view.json["label"] == "New iPhone" && view.json["key_protection"] == "user-verification", "\(view.text)")
            let signature = Data(try P256Signature.sign(statement, pemPrivateKey: laptopPem).signature).base64EncodedString()
            // Only the pairing device may approve.
            #expect(try await client.call(.post, "/v1/devices/pairing/\(code)/approve", token: h.phone,
                                          json: #"{"signature": "\#(signature)"}"#).status == .unauthorized)
            let linked = try await client.call(.post, "/v1/devices/pairing/\(code)/approve", token: h.laptop,
                                               json: #"{"signature": "\#(signature)"}"#)
            #expect(linked.status == .created)
            let state = try h.ledger.read { try $0.deviceState("iphone-2") }
            #expect(state?.person == "quinn" && state?.key?.trust == .introducedBy(device: "laptop-1", signature: Array(Data(base64Encoded: signature)!)))
            // The new phone signs in with its own key: no secret was ever copied to it.
            let body = try await SessionTests.signedChallenge(client, "iphone-2", newPem)
            #expect(try await client.call(.post, "/v1/sessions", json: body).status == .created)
        }
    }
}

/// A session proves the key that signed its challenge: a key rotation (how a lost or
/// compromised key is taken out of service) ends every session that key made.
@Suite struct SessionKeyBindingTests {
    @Test func aRotatedKeyEndsTheSessionsItSignedIn() async throws {
        let old = TestDeviceKey(), new = TestDeviceKey()
        let h = try ServerHarness(keyedLaptop: old)
        let oldPem = old.pem, newPem = new.pem, oldPrint = try old.key().fingerprint.hex, oldKey = try old.key(.userVerification)
        // The rotation, signed by the old key, made ready before the session exists.
        var newKey = try new.key(.userVerification)
        newKey.trust = .introducedBy(device: "laptop-1",
                                     signature: try old.sign(try h.ledger.rotationStatement(device: "laptop-1", key: newKey, signedBy: "laptop-1")))
        let rotation = Command.rotateDeviceKey(device: "laptop-1", key: newKey)
        try await h.test { client in
            let made = try await client.call(.post, "/v1/sessions", json: try await SessionTests.signedChallenge(client, "laptop-1", oldPem))
            guard case .string(let token)? = made.json["token"] else { Issue.record("no session: \(made.text)"); return }
            #expect(made.json["key_fingerprint"] == .string(oldPrint))
            #expect(try await client.call(.get, "/v1/today", token: token).status == .ok)
            let identity = try h.server.authenticator.identify(secret: token, now: ServerHarness.systemNow())
            try h.ledger.run(rotation, now: ServerHarness.systemNow())
            // Open streams ask again on each event and heartbeat: the rotation ends them too.
            #expect(try !h.server.authenticator.isLive(identity, at: ServerHarness.systemNow()))
            let refused = try await client.call(.get, "/v1/today", token: token)
            #expect(refused.status == .unauthorized && refused.text.contains("key changed"))
            // The new key signs in again.
            let again = try await client.call(.post, "/v1/sessions", json: try await SessionTests.signedChallenge(client, "laptop-1", newPem))
            guard case .string(let fresh)? = again.json["token"] else { Issue.record("no session: \(again.text)"); return }
            #expect(try await client.call(.get, "/v1/today", token: fresh).status == .ok)
            // The first key never comes back (key.one_device: a key is in force once), so its
            // session stays ended; the refusal leaves the second key and its session in force.
            var back = oldKey
            let statement = try h.ledger.rotationStatement(device: "laptop-1", key: back, signedBy: "laptop-1")
            back.trust = .introducedBy(device: "laptop-1", signature: try P256Signature.sign(statement, pemPrivateKey: newPem).signature)
            #expect(code { try h.ledger.run(.rotateDeviceKey(device: "laptop-1", key: back), now: ServerHarness.systemNow()) } == .invalidInput)
            #expect(try h.ledger.read { try $0.deviceState("laptop-1") }?.key?.fingerprint.hex != oldPrint)
            #expect(try await client.call(.get, "/v1/today", token: token).status == .unauthorized)
            #expect(try await client.call(.get, "/v1/today", token: fresh).status == .ok)
        }
    }

    /// A rotation ends the rotated device's session streams as it arrives, as a revocation
    /// does; a token names no key, so its streams go on; and a session made under the key a
    /// rotation put in force (or a later one) is not ended by that rotation when its
    /// catch-up reads past it.
    @Test func aRotationEndsTheDevicesSessionStreams() {
        let rotation = Event(seq: 9, at: t0, actor: "operator", commandId: "cmd-r", org: "quinn-co", person: "quinn",
                             payload: .deviceKeyRotated(KeyRotation(device: "laptop-1", previousFingerprint: .zero,
                                                                    key: try! TestDeviceKey().key())))
        let session = Identity(id: "ses-0123456789abcdef", org: "quinn-co", scope: .device, subject: "laptop-1", person: "quinn",
                               keySeq: 3)
        var token = session
        token.id = "tok-0123456789abcdef"
        var other = session
        other.subject = "phone-1"
        #expect(StreamFilter.revokes(rotation, session))
        #expect(!StreamFilter.revokes(rotation, token) && !StreamFilter.revokes(rotation, other))
        var underIt = session, later = session
        underIt.keySeq = 9
        later.keySeq = 14
        #expect(!StreamFilter.revokes(rotation, underIt) && !StreamFilter.revokes(rotation, later))
    }

    /// A record written before sessions were bound to their key names no key: whichever
    /// key signed it in may since have been rotated out, so it is refused.
    @Test func aSessionRecordWithoutItsKeyIsRefused() async throws {
        let key = TestDeviceKey()
        let h = try ServerHarness(keyedLaptop: key)
        let now = ServerHarness.systemNow()
        let legacy = SessionStore.Session(id: "ses-0123456789abcdef", device: "laptop-1", person: "quinn", org: "quinn-co",
                                          createdAt: now, expiresAt: now.adding(milliseconds: Timestamp.day), keyFingerprint: nil,
                                          keySeq: nil)
        let secret = "als_ses-0123456789abcdef_" + String(repeating: "ab", count: 32)
        try h.server.sessions.add(legacy, secretHash: Ledger.tokenHash(secret))
        #expect(try h.server.sessions.session(id: legacy.id)?.keyFingerprint == nil)
        try await h.test { client in
            let refused = try await client.call(.get, "/v1/today", token: secret)
            #expect(refused.status == .unauthorized && refused.text.contains("key changed"))
        }
    }

    /// A caller who proved nothing makes the server keep nothing: challenges are stateless
    /// until a signature verifies, so none can be evicted or made to tell anything, and each
    /// answers once.
    @Test func challengesKeepNothingAndAnswerOnce() async throws {
        let key = TestDeviceKey()
        let h = try ServerHarness(keyedLaptop: key)
        let pem = key.pem
        try await h.test { client in
            let long = String(repeating: "d", count: 129)
            let refused = try await client.call(.post, "/v1/sessions/challenge", json: #"{"device": "\#(long)"}"#)
            #expect(refused.status == .badRequest && refused.code == "invalid_input", "\(refused.text)")
            let target = try await client.call(.post, "/v1/sessions/challenge", json: #"{"device": "phone-1", "purpose": "revoke", "target": "a/b"}"#)
            #expect(target.status == .badRequest, "\(target.text)")
            // A null purpose is none of the three (absent is a sign-in).
            let null = try await client.call(.post, "/v1/sessions/challenge", json: #"{"device": "d9", "purpose": null}"#)
            #expect(null.status == .badRequest && null.code == "invalid_input", "\(null.text)")
            // The device's own challenge survives any number issued after it for the same device.
            let mine = try await SessionTests.signedChallenge(client, "laptop-1", pem)
            for _ in 0..<20 {
                #expect(try await client.call(.post, "/v1/sessions/challenge", json: #"{"device": "laptop-1"}"#).status == .created)
            }
            #expect(try await client.call(.post, "/v1/sessions", json: mine).status == .created)
            // Answered once; a used, an unknown and a forged one get the same 401.
            let again = try await client.call(.post, "/v1/sessions", json: mine)
            let unknown = try await client.call(.post, "/v1/sessions", json: #"{"challenge_id": "chl-0000", "signature": "AA=="}"#)
            let forged = try await client.call(.post, "/v1/sessions", json: mine.replacingOccurrences(of: "-laptop-1\"", with: "-phone-1\""))
            #expect([again, unknown, forged].allSatisfy { $0.status == .unauthorized && $0.text == unknown.text },
                    "\(again.text) \(unknown.text) \(forged.text)")
            // A sign-in's challenge does not sign out the others.
            guard case .string(let token)? = try await client.call(.post, "/v1/sessions",
                    json: try await SessionTests.signedChallenge(client, "laptop-1", pem)).json["token"] else { Issue.record("no session"); return }
            let wrong = try await client.call(.post, "/v1/sessions/sign-out-others", token: token,
                                              json: try await SessionTests.signedChallenge(client, "laptop-1", pem))
            #expect(wrong.status == .unauthorized, "\(wrong.text)")
            // Only the key's holder learns that its device was revoked.
            let late = try await SessionTests.signedChallenge(client, "laptop-1", pem)
            try h.ledger.run(.revokeDevice(device: "laptop-1", reason: "sold"), now: ServerHarness.systemNow())
            let revoked = try await client.call(.post, "/v1/sessions", json: late)
            #expect(revoked.status == .forbidden && revoked.code == "device_revoked", "\(revoked.text)")
            let stranger = try await client.call(.post, "/v1/sessions",
                                                 json: try await SessionTests.signedChallenge(client, "laptop-1", TestDeviceKey().pem))
            #expect(stranger.status == .unauthorized, "\(stranger.text)")
        }
    }
}
