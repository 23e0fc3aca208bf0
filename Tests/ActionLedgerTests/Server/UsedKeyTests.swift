import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
@testable import ActionLedger
@testable import LedgerServer

/// An Idempotency-Key another command already used is refused before anything single use
/// is spent: the pairing code and the revocation challenge still work under a fresh key.
@Suite struct UsedKeyTests {
    @Test func aPairingApprovalUnderAUsedKeyKeepsItsCode() async throws {
        let laptopKey = TestDeviceKey(), newKey = TestDeviceKey()
        let h = try ServerHarness(keyedLaptop: laptopKey)
        let laptopPem = laptopKey.pem, newPublic = Data(newKey.spki).base64EncodedString()
        try h.ledger.run(.propose(proposal("used-key")), now: ServerHarness.systemNow(), commandId: "cmd-taken")
        try await h.test { client in
            let opened = try await client.call(.post, "/v1/devices/pairing", token: h.laptop)
            guard case .string(let code)? = opened.json["code"] else { Issue.record("no code: \(opened.text)"); return }
            let posted = try await client.call(.post, "/v1/devices", json: """
                {"code": "\(code)", "device": "iphone-2", "label": "New iPhone", "platform": "ios",
                 "public_key": "\(newPublic)", "key_protection": "user-verification"}
                """)
            guard case .string(let hex)? = posted.json["statement_hex"], let statement = Hex.decode(hex) else { Issue.record("no statement"); return }
            let body = #"{"signature": "\#(Data(try P256Signature.sign(statement, pemPrivateKey: laptopPem).signature).base64EncodedString())"}"#
            let reused = try await client.call(.post, "/v1/devices/pairing/\(code)/approve", token: h.laptop, json: body,
                                               headers: [.idempotencyKey: "cmd-taken"])
            #expect(reused.status == .badRequest && reused.code == "invalid_input", "\(reused.text)")
            #expect(try h.ledger.read { try $0.deviceState("iphone-2") } == nil)
            let linked = try await client.call(.post, "/v1/devices/pairing/\(code)/approve", token: h.laptop, json: body,
                                               headers: [.idempotencyKey: "cmd-fresh"])
            #expect(linked.status == .created, "\(linked.text)")
            #expect(try h.ledger.read { try $0.deviceState("iphone-2")?.person } == "quinn")
        }
    }

    @Test func aRevocationUnderAUsedKeyKeepsItsChallenge() async throws {
        let key = TestDeviceKey()
        let h = try ServerHarness(keyedLaptop: key)
        let pem = key.pem
        try h.ledger.run(.propose(proposal("used-key")), now: ServerHarness.systemNow(), commandId: "cmd-taken")
        try await h.test { client in
            let body = try await SessionTests.signedChallenge(client, "laptop-1", pem, purpose: "revoke", target: "phone-1")
            let reused = try await client.call(.post, "/v1/devices/phone-1/revoke", token: h.laptop, json: body,
                                               headers: [.idempotencyKey: "cmd-taken"])
            #expect(reused.status == .badRequest && reused.code == "invalid_input", "\(reused.text)")
            #expect(try h.ledger.read { try $0.deviceState("phone-1")?.revokedAt } == nil)
            let revoked = try await client.call(.post, "/v1/devices/phone-1/revoke", token: h.laptop, json: body,
                                                headers: [.idempotencyKey: "cmd-fresh"])
            #expect(revoked.status == .ok, "\(revoked.text)")
        }
    }
    /// Past the 7 days its response is kept, a revocation's own replay is still answered as
    /// a replay (the engine knows the id), never refused as another command's key.
    @Test func aRevocationReplayedAfterItsResponseExpiredIsStillAReplay() async throws {
        let key = TestDeviceKey(), skew = Locked<Int64>(0)
        let h = try ServerHarness(keyedLaptop: key, clock: { ServerHarness.systemNow().adding(milliseconds: skew.value) })
        let pem = key.pem, now = ServerHarness.systemNow()
        let laptop = try h.ledger.issueToken(org: "quinn-co", scope: .device, subject: "laptop-1",
                                             expiresAt: now.adding(milliseconds: 30 * Timestamp.day), now: now).secret
        try await h.test { client in
            let body = try await SessionTests.signedChallenge(client, "laptop-1", pem, purpose: "revoke", target: "phone-1")
            let first = try await client.call(.post, "/v1/devices/phone-1/revoke", token: laptop, json: body,
                                              headers: [.idempotencyKey: "cmd-revoke-old"])
            #expect(first.status == .ok, "\(first.text)")
            skew.update { $0 = SessionStore.defaultResponseRetention + Timestamp.day }
            let head = try h.ledger.read { try $0.head().seq }
            let late = try await client.call(.post, "/v1/devices/phone-1/revoke", token: laptop, json: body,
                                             headers: [.idempotencyKey: "cmd-revoke-old"])
            #expect(late.status == .ok && late.headers[.idempotentReplayed] == "true", "\(late.status) \(late.text)")
            #expect(first.json["events"] != nil && late.json["events"] == first.json["events"])
            #expect(try h.ledger.read { try $0.head().seq } == head)
        }
    }
}
