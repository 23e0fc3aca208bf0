import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
@testable import ActionLedger
@testable import LedgerServer

/// Key rotation over HTTP (statements.md §3.1): the caller's device signs the rotation
/// statement the server hands it, the engine checks the signature, and sessions made under
/// the old key end.
@Suite struct KeyRotationRouteTests {
    @Test func aDeviceRotatesItsOwnKeyWithTheKeyItIsLeaving() async throws {
        let old = TestDeviceKey(), new = TestDeviceKey(), stranger = TestDeviceKey()
        let h = try ServerHarness(keyedLaptop: old)
        let oldPem = old.pem, newPem = new.pem, strangerPem = stranger.pem
        let newPublic = Data(new.spki).base64EncodedString()
        let oldPrint = try old.key().fingerprint.hex, newPrint = try new.key().fingerprint.hex
        try await h.test { client in
            let session = try await client.call(.post, "/v1/sessions", json: try await SessionTests.signedChallenge(client, "laptop-1", oldPem))
            guard case .string(let token)? = session.json["token"] else { Issue.record("no session: \(session.text)"); return }
            let request = #"{"public_key": "\#(newPublic)"}"#
            let answer = try await client.call(.post, "/v1/devices/laptop-1/rotation-statement", token: token, json: request)
            #expect(answer.status == .ok, "\(answer.text)")
            guard case .string(let hex)? = answer.json["statement_hex"], let statement = Hex.decode(hex) else {
                Issue.record("no statement: \(answer.text)"); return
            }
            // The statement is §3.1's, naming the key in force as previous and the caller as signer;
            // the protection defaults to the current key's.
            let lines = String(decoding: statement, as: UTF8.self).split(separator: "\n").map(String.init)
            #expect(lines.first == Statement.rotationDomain)
            #expect(lines.contains("previous_key:\(oldPrint)") && lines.contains("key:\(newPrint)"))
            #expect(lines.contains("signed_by:laptop-1") && lines.contains("key_protection:user-verification"))
            #expect(answer.json["previous_key_fingerprint"] == .string(oldPrint))
            // Every line it holds is in the answer, so the signer rebuilds it before signing.
            #expect(answer.json["platform"] == .string("web") && answer.json["org"] == .string("quinn-co")
                    && answer.json["person"] == .string("quinn"))

            let head = try h.ledger.read { try $0.head().seq }
            // A signature by a key that is not the laptop's is refused and writes nothing.
            let forged = Data(try P256Signature.sign(statement, pemPrivateKey: strangerPem).signature).base64EncodedString()
            let refused = try await client.call(.post, "/v1/devices/laptop-1/rotate-key", token: token,
                                                json: #"{"public_key": "\#(newPublic)", "signature": "\#(forged)"}"#)
            #expect(refused.status == .forbidden && refused.code == "bad_proof", "\(refused.text)")
            #expect(try h.ledger.read { try $0.head().seq } == head)

            let signature = Data(try P256Signature.sign(statement, pemPrivateKey: oldPem).signature).base64EncodedString()
            let body = #"{"public_key": "\#(newPublic)", "signature": "\#(signature)"}"#
            let rotated = try await client.call(.post, "/v1/devices/laptop-1/rotate-key", token: token, json: body,
                                                headers: [.idempotencyKey: "rotate-laptop-1"])
            #expect(rotated.status == .ok, "\(rotated.text)")
            #expect(try h.ledger.deviceKey("laptop-1")?.fingerprint.hex == newPrint)
            let recorded = try h.ledger.read { r in try r.event(try r.head().seq)?.event }
            guard case .deviceKeyRotated(let r)? = recorded?.payload else { Issue.record("no rotation recorded"); return }
            #expect(r.key.introducer == "laptop-1" && r.previousFingerprint.hex == oldPrint)
            #expect(try h.ledger.verifyProofs() >= 1)
            #expect(try h.ledger.replayDecisions().mismatch == nil)

            // The session made under the old key ends; the new key signs in.
            #expect(try await client.call(.get, "/v1/today", token: token).status == .unauthorized)
            let fresh = try await client.call(.post, "/v1/sessions", json: try await SessionTests.signedChallenge(client, "laptop-1", newPem))
            #expect(fresh.status == .created, "\(fresh.text)")
            // A retry of the rotation under the device's token is answered from the first, writing nothing.
            let after = try h.ledger.read { try $0.head().seq }
            let retry = try await client.call(.post, "/v1/devices/laptop-1/rotate-key", token: h.laptop, json: body,
                                              headers: [.idempotencyKey: "rotate-laptop-1"])
            #expect(retry.status == .ok && retry.headers[.idempotentReplayed] == "true", "\(retry.text)")
            #expect(try h.ledger.read { try $0.head().seq } == after)
        }
    }

    @Test func onlyAKeyedDeviceOfThePersonSignsARotation() async throws {
        let old = TestDeviceKey(), new = TestDeviceKey()
        let h = try ServerHarness(keyedLaptop: old)
        let newPublic = Data(new.spki).base64EncodedString(), newPem = new.pem, oldPublic = Data(old.spki).base64EncodedString()
        let request = #"{"public_key": "\#(newPublic)"}"#
        try await h.test { client in
            // Dana's tablet (same org) cannot touch quinn's laptop; another org's or an unknown device is not found.
            let other = try await client.call(.post, "/v1/devices/laptop-1/rotation-statement", token: h.tablet, json: request)
            #expect(other.status == .forbidden && other.code == "device_not_owned", "\(other.text)")
            let unknown = try await client.call(.post, "/v1/devices/nobody-1/rotation-statement", token: h.laptop, json: request)
            #expect(unknown.status == .notFound && unknown.code == "unknown_device", "\(unknown.text)")
            // Operators, specialists and auditors rotate no key here (the CLI is the operator's path).
            #expect(try await client.call(.post, "/v1/devices/laptop-1/rotate-key", token: h.specialist, json: request).status == .forbidden)
            // Her unkeyed phone cannot vouch for a key: it is not even asked to sign, and a
            // signature it sends anyway is refused by the engine; nothing written.
            let head = try h.ledger.read { try $0.head().seq }
            let statement = try await client.call(.post, "/v1/devices/laptop-1/rotation-statement", token: h.phone, json: request)
            #expect(statement.status == .forbidden && statement.code == "introduction_required", "\(statement.text)")
            let signature = Data(try P256Signature.sign(Array("anything".utf8), pemPrivateKey: newPem).signature).base64EncodedString()
            let byPhone = try await client.call(.post, "/v1/devices/laptop-1/rotate-key", token: h.phone,
                                                json: #"{"public_key": "\#(newPublic)", "signature": "\#(signature)"}"#)
            #expect(byPhone.status == .forbidden && byPhone.code == "introduction_required", "\(byPhone.text)")
            // Nor is the laptop asked to sign a rotation to the key in force.
            let same = try await client.call(.post, "/v1/devices/laptop-1/rotation-statement", token: h.laptop,
                                             json: #"{"public_key": "\#(oldPublic)"}"#)
            #expect(same.status == .badRequest && same.code == "invalid_input", "\(same.text)")
            // An unkeyed device has no key to rotate.
            let unkeyed = try await client.call(.post, "/v1/devices/phone-1/rotation-statement", token: h.laptop, json: request)
            #expect(unkeyed.status == .badRequest && unkeyed.code == "invalid_input", "\(unkeyed.text)")
            for bad in [#"{"public_key": "not base64!"}"#, #"{"public_key": "\#(newPublic)", "key_protection": "face"}"#, #"{}"#,
                        #"{"public_key": "\#(newPublic)", "extra": 1}"#] {
                let r = try await client.call(.post, "/v1/devices/laptop-1/rotation-statement", token: h.laptop, json: bad)
                #expect(r.status == .badRequest && r.code == "invalid_input", "\(bad): \(r.text)")
            }
            let unsigned = try await client.call(.post, "/v1/devices/laptop-1/rotate-key", token: h.laptop, json: request)
            #expect(unsigned.status == .badRequest && unsigned.code == "invalid_input", "\(unsigned.text)")
            #expect(try h.ledger.read { try $0.head().seq } == head)
        }
    }

    /// Her phone rotates her laptop's key; the same request sent again (its answer lost) is
    /// answered from the first. A key the laptop left never comes back, so the signature
    /// that retired it cannot be replayed to bring its successor back.
    @Test func anotherDeviceRotatesAKeyAndARetryIsReplayed() async throws {
        let laptopKey = TestDeviceKey(), phoneKey = TestDeviceKey(), next = TestDeviceKey()
        let h = try ServerHarness(keyedLaptop: laptopKey)
        try h.ledger.linkKeyed("phone-2", phoneKey, protection: .userVerification, introducer: ("laptop-1", laptopKey),
                               now: ServerHarness.systemNow())
        let phonePem = phoneKey.pem, laptopPublic = Data(laptopKey.spki).base64EncodedString()
        let nextPublic = Data(next.spki).base64EncodedString(), otherPublic = Data(TestDeviceKey().spki).base64EncodedString()
        try await h.test { client in
            let session = try await client.call(.post, "/v1/sessions", json: try await SessionTests.signedChallenge(client, "phone-2", phonePem))
            guard case .string(let token)? = session.json["token"] else { Issue.record("no session: \(session.text)"); return }
            func post(_ publicKey: String, _ bytes: [UInt8], signer pem: String, as caller: String, key: String) async throws -> TestResponse {
                let signature = Data(try P256Signature.sign(bytes, pemPrivateKey: pem).signature).base64EncodedString()
                return try await client.call(.post, "/v1/devices/laptop-1/rotate-key", token: caller,
                                             json: #"{"public_key": "\#(publicKey)", "signature": "\#(signature)"}"#,
                                             headers: [.idempotencyKey: key])
            }
            var signed: [UInt8] = []
            func rotate(_ publicKey: String, signer pem: String, as caller: String, key: String) async throws -> TestResponse {
                let statement = try await client.call(.post, "/v1/devices/laptop-1/rotation-statement", token: caller,
                                                      json: #"{"public_key": "\#(publicKey)"}"#)
                guard case .string(let hex)? = statement.json["statement_hex"], let bytes = Hex.decode(hex) else { return statement }
                signed = bytes
                return try await post(publicKey, bytes, signer: pem, as: caller, key: key)
            }
            let first = try await rotate(nextPublic, signer: phonePem, as: token, key: "rot-laptop-1")
            #expect(first.status == .ok, "\(first.text)")
            let head = try h.ledger.read { try $0.head().seq }
            // The retry signs the same statement again: ECDSA gives other signature bytes.
            let retry = try await post(nextPublic, signed, signer: phonePem, as: token, key: "rot-laptop-1")
            #expect(retry.status == .ok && retry.headers[.idempotentReplayed] == "true", "\(retry.text)")
            #expect(try h.ledger.read { try $0.head().seq } == head)
            // The same id for another key is another command: refused, the id is taken.
            let other = try await rotate(otherPublic, signer: phonePem, as: token, key: "rot-laptop-1")
            #expect(other.status == .badRequest && other.json["field"] == .string("command_id"), "\(other.text)")
            #expect(try h.ledger.read { try $0.head().seq } == head)
            // Back to the key it left: refused, whoever signs.
            let back = try await rotate(laptopPublic, signer: phonePem, as: token, key: "rot-back")
            #expect(back.status == .badRequest && back.code == "invalid_input", "\(back.text)")
        }
    }
}
