import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
@testable import ActionLedger
@testable import LedgerServer

/// The responses kept for `Idempotency-Key` replays answer only the command the engine
/// registered under the key: never another caller's.
@Suite struct StoredResponseTests {
    /// A duplicate tap registers no id, so nothing is kept under its key; a signed tap
    /// another device then makes under that key is refused and recorded, and its caller gets
    /// that refusal, not the duplicate tap's answer about someone else's action.
    @Test func aRecordedRefusalNeverGetsAnotherCommandsKeptResponse() async throws {
        let key = TestDeviceKey()
        let h = try ServerHarness(keyedLaptop: key)
        let pem = key.pem
        try await h.test { client in
            #expect(try await client.call(.post, "/v1/actions", token: h.specialist, json: proposalJSON("m-1", stakes: "medium")).status == .created)
            let m2 = try await client.call(.post, "/v1/actions", token: h.specialist, json: proposalJSON("m-2", stakes: "medium"))
            guard case .string(let content)? = m2.json["action", "content_hash"] else { Issue.record("no hash: \(m2.text)"); return }
            #expect(try await client.call(.post, "/v1/actions/m-1/review", token: h.phone).status == .ok)
            let duplicate = try await client.call(.post, "/v1/actions/m-1/review", token: h.phone, headers: [.idempotencyKey: "cmd-dup"])
            #expect(duplicate.status == .ok)
            // The laptop's signed approve of m-2 before its review, under the same key.
            let now = ServerHarness.systemNow()
            let statement = try h.ledger.statement(for: .tap(.approve, actionId: "m-2", device: "laptop-1"), commandId: "cmd-dup",
                                                   claimedAt: now, contentHash: Digest(hex: content))
            let signature = Data(try P256Signature.sign(statement.bytes, pemPrivateKey: pem).signature).base64EncodedString()
            let body = #"{"content_hash": "\#(content)", "claimed_at": "\#(now.iso8601)", "user_verified": true, "proof": {"format": "p256", "signature": "\#(signature)"}}"#
            let refused = try await client.call(.post, "/v1/actions/m-2/approve", token: h.laptop, json: body, headers: [.idempotencyKey: "cmd-dup"])
            #expect(refused.status == .conflict && refused.code == "taps_required", "\(refused.status) \(refused.text)")
            #expect(!refused.text.contains("m-1") && refused.headers[.idempotentReplayed] == nil)
            // Its replay is that refusal, byte for byte.
            let again = try await client.call(.post, "/v1/actions/m-2/approve", token: h.laptop, json: body, headers: [.idempotencyKey: "cmd-dup"])
            #expect(again.text == refused.text && again.headers[.idempotentReplayed] == "true")
        }
    }

    /// An unsigned edit sent with the content it saw (If-Match or content_hash) changes that
    /// content; its retry under the same key is its kept answer, not stale_content.
    @Test func anEditsRetryWithTheContentItSawIsReplayed() async throws {
        let h = try ServerHarness()
        try await h.test { client in
            // The hash it saw as If-Match (e-1), then in the body (e-2).
            for (id, inHeader) in [("e-1", true), ("e-2", false)] {
                let made = try await client.call(.post, "/v1/actions", token: h.specialist, json: proposalJSON(id, stakes: "medium"))
                guard case .string(let content)? = made.json["action", "content_hash"] else { Issue.record("no hash: \(made.text)"); return }
                let body = inHeader ? #"{"text": "new text"}"# : #"{"text": "new text", "content_hash": "\#(content)"}"#
                var headers: HTTPFields = [.idempotencyKey: "edit-\(id)"]
                if inHeader { headers[.ifMatch] = "\"\(content)\"" }
                let first = try await client.call(.post, "/v1/actions/\(id)/edit", token: h.phone, json: body, headers: headers)
                #expect(first.status == .ok, "\(id): \(first.text)")
                let retry = try await client.call(.post, "/v1/actions/\(id)/edit", token: h.phone, json: body, headers: headers)
                #expect(retry.status == .ok && retry.headers[.idempotentReplayed] == "true" && retry.text == first.text, "\(id): \(retry.text)")
                // A new edit from that content, stale now, is still refused as such.
                headers[.idempotencyKey] = "edit-\(id)-again"
                let stale = try await client.call(.post, "/v1/actions/\(id)/edit", token: h.phone, json: body, headers: headers)
                #expect(stale.status == .preconditionFailed && stale.code == "stale_content", "\(id): \(stale.text)")
            }
        }
    }

    /// A revocation spends its signed challenge; its replay under the same key is answered
    /// from the kept response before the spent challenge is judged again.
    @Test func aRevocationsReplayGetsItsKeptResponse() async throws {
        let key = TestDeviceKey()
        let h = try ServerHarness(keyedLaptop: key)
        let pem = key.pem
        try await h.test { client in
            let body = try await SessionTests.signedChallenge(client, "laptop-1", pem, purpose: "revoke", target: "phone-1")
            let first = try await client.call(.post, "/v1/devices/phone-1/revoke", token: h.laptop, json: body,
                                              headers: [.idempotencyKey: "cmd-revoke-1"])
            #expect(first.status == .ok, "\(first.text)")
            let again = try await client.call(.post, "/v1/devices/phone-1/revoke", token: h.laptop, json: body,
                                              headers: [.idempotencyKey: "cmd-revoke-1"])
            #expect(again.status == .ok && again.text == first.text && again.headers[.idempotentReplayed] == "true")
            // Without the key, the spent challenge is refused.
            #expect(try await client.call(.post, "/v1/devices/phone-1/revoke", token: h.laptop, json: body).status == .unauthorized)
            // Copies sent at once, each on its own connection: one runs, the others wait for
            // its kept answer (none is refused for the challenge the first one spent).
            try h.ledger.run(.linkDevice(device: "phone-2", person: "quinn", org: "quinn-co", label: "spare", platform: .ios),
                             now: ServerHarness.systemNow())
            let twice = try await SessionTests.signedChallenge(client, "laptop-1", pem, purpose: "revoke", target: "phone-2")
            let port = client.port!, token = h.laptop
            let statuses = try await withThrowingTaskGroup(of: (Int, Bool).self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        try await TestClient.withClient(host: "localhost", port: port, configuration: .init(timeout: .seconds(20))) { c in
                            let r = try await c.post("/v1/devices/phone-2/revoke",
                                                     headers: [.authorization: "Bearer \(token)", .contentType: "application/json",
                                                               .idempotencyKey: "cmd-revoke-2"],
                                                     body: ByteBuffer(string: twice))
                            return (r.status.code, r.headers[.idempotentReplayed] == "true")
                        }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.allSatisfy { $0.0 == 200 } && statuses.filter { !$0.1 }.count == 1, "\(statuses)")
        }
    }

    /// A request under a key another request holds waits until that one has left (and kept
    /// its response); other keys do not wait.
    @Test func requestsUnderOneKeyRunOneAtATime() async throws {
        let gate = KeyedGate()
        let order = Locked([String]())
        await gate.enter("k")
        let second = Task {
            await gate.enter("k")
            order.update { $0.append("second") }
            gate.leave("k")
        }
        await gate.enter("other")
        gate.leave("other")
        try await Task.sleep(for: .milliseconds(50))
        order.update { $0.append("first") }
        gate.leave("k")
        await second.value
        #expect(order.value == ["first", "second"])
        #expect(gate.heldKeys == 0)
    }
}
