import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
@testable import ActionLedger
@testable import LedgerServer

/// Requests a hostile tester sent `ledger serve`: each is refused with a problem document,
/// writes nothing and tells the caller nothing it may not see.
@Suite struct HostileRequestTests {
    @Test func aLastEventIdPastAnySeqIsRefusedAndTheServerLivesOn() async throws {
        let h = try ServerHarness()
        try await h.test { client in
            for accept in ["application/x-ndjson", "text/event-stream"] {
                let r = try await client.call(.get, "/v1/events", token: h.auditor,
                                              headers: [.lastEventID: "18446744073709551615", .accept: accept])
                #expect(r.status == .badRequest && r.code == "invalid_input", "\(r.status) \(r.text)")
            }
            // Digits only, and never past the log: such a cursor would wait silently for a seq the
            // log has not reached (a forged one, or one from before a restore).
            let head = try h.ledger.read { try $0.head().seq }
            for value in ["+1", "0x1", "\(head + 1)"] {
                let r = try await client.call(.get, "/v1/events", token: h.auditor, headers: [.lastEventID: value, .accept: "application/x-ndjson"])
                #expect(r.status == .badRequest && r.code == "invalid_input", "\(value): \(r.status) \(r.text)")
            }
            for from in ["+1", "\(head + 2)"] {
                let r = try await client.call(.get, "/v1/events?from=\(from)", token: h.auditor, headers: [.accept: "application/x-ndjson"])
                #expect(r.status == .badRequest && r.code == "invalid_input", "from=\(from): \(r.status) \(r.text)")
            }
            let upToDate = try await client.call(.get, "/v1/events", token: h.auditor,
                                                 headers: [.lastEventID: "\(head)", .accept: "application/x-ndjson"])
            #expect(upToDate.status == .ok && upToDate.body.readableBytes == 0, "\(upToDate.text)")
            #expect(try await client.call(.get, "/healthz").status == .ok)
            // The auth scheme is case-insensitive (RFC 9110 §11.1).
            #expect(try await client.call(.get, "/v1/today", headers: [.authorization: "bearer \(h.phone)"]).status == .ok)
        }
    }

    /// A used idempotency key answers only the command that used it: another specialist's
    /// proposal of the same action id under that key gets the refusal it would get without
    /// it, never the first proposal's body.
    @Test func aUsedIdempotencyKeyNeverAnswersWithAnotherCallersProposal() async throws {
        let h = try ServerHarness()
        let other = try h.ledger.issueToken(org: "quinn-co", scope: .specialist, subject: "x-replies",
                                            expiresAt: ServerHarness.systemNow().adding(milliseconds: Timestamp.day),
                                            now: ServerHarness.systemNow()).secret
        try await h.test { client in
            let key: HTTPFields = [.idempotencyKey: "sasha-batch-17-item-3"]
            let secret = proposalJSON("of-secret").replacingOccurrences(of: "New set tonight", with: "SECRET caption")
            #expect(try await client.call(.post, "/v1/actions", token: h.specialist, json: secret, headers: key).status == .created)
            let head = try h.ledger.read { try $0.head().seq }
            let theirs = try await client.call(.post, "/v1/actions", token: other, json: proposalJSON("of-secret", agent: "x-replies"),
                                               headers: key)
            #expect(theirs.status == .conflict && theirs.code == "duplicate_action", "\(theirs.status) \(theirs.text)")
            #expect(theirs.headers[.idempotentReplayed] == nil && !theirs.text.contains("SECRET"))
            // The same proposal from its own specialist is still a replay.
            let again = try await client.call(.post, "/v1/actions", token: h.specialist, json: secret, headers: key)
            #expect(again.status == .created && again.headers[.idempotentReplayed] == "true")
            #expect(try h.ledger.read { try $0.head().seq } == head)
            // An outcome's key answers the same outcome only, not one with fewer fields.
            #expect(try await client.call(.post, "/v1/actions", token: h.specialist, json: proposalJSON("of-run", stakes: "low")).status == .created)
            #expect(try await client.call(.post, "/v1/actions/of-run/approve", token: h.phone).status == .ok)
            let outcomeKey: HTTPFields = [.idempotencyKey: "cmd-outcome-1"]
            let ran = #"{"status": "executed", "outcome": {"post_id": "p1"}}"#
            #expect(try await client.call(.post, "/v1/actions/of-run/outcome", token: h.specialist, json: ran, headers: outcomeKey).status == .ok)
            let same = try await client.call(.post, "/v1/actions/of-run/outcome", token: h.specialist, json: ran, headers: outcomeKey)
            #expect(same.headers[.idempotentReplayed] == "true")
            let fewer = try await client.call(.post, "/v1/actions/of-run/outcome", token: h.specialist,
                                              json: #"{"status": "executed", "outcome": {}}"#, headers: outcomeKey)
            #expect(fewer.headers[.idempotentReplayed] == nil && fewer.status != .ok, "\(fewer.status) \(fewer.text)")
        }
    }

    /// Another person's device learns nothing from If-Match on a change: the ownership
    /// refusal comes first, as it does for taps.
    @Test func anotherPersonsDeviceGetsNoContentHashFromIfMatch() async throws {
        let h = try ServerHarness()
        try await h.test { client in
            #expect(try await client.call(.post, "/v1/actions", token: h.specialist, json: proposalJSON("of-41")).status == .created)
            let stale: HTTPFields = [.ifMatch: "\"\(String(repeating: "0", count: 64))\""]
            for (step, body) in [("dismiss", #"{"reason": "x"}"#), ("edit", #"{"text": "x"}"#), ("hold", #"{"until": "2099-01-01T00:00:00Z"}"#)] {
                let r = try await client.call(.post, "/v1/actions/of-41/\(step)", token: h.tablet, json: body, headers: stale)
                #expect(r.status == .forbidden && r.code == "device_not_owned", "\(step): \(r.status) \(r.text)")
                #expect(!r.text.contains("content_hash"))
            }
            // The owner's stale change names the current hash as the engine does.
            let own = try await client.call(.post, "/v1/actions/of-41/dismiss", token: h.phone, json: #"{"reason": "x"}"#, headers: stale)
            #expect(own.status == .preconditionFailed && own.json["current_content_hash"] != nil, "\(own.text)")
        }
    }

    /// Path ids are percent-decoded: an encoded `:` or `@` finds the action or actor, so an
    /// auditor's listing is never empty for want of decoding; a non-identifier is refused.
    @Test func percentEncodedPathIdsAreDecoded() async throws {
        let h = try ServerHarness()
        try await h.test { client in
            #expect(try await client.call(.post, "/v1/actions", token: h.specialist, json: proposalJSON("of:enc@1")).status == .created)
            let action = try await client.call(.get, "/v1/actions/of%3Aenc%401", token: h.phone)
            #expect(action.status == .ok && action.json["action", "action_id"] == "of:enc@1", "\(action.status) \(action.text)")
            #expect(action.headers[.cacheControl] == "no-store")  // a person's action: no cache keeps it
            #expect(try await client.call(.get, "/v1/audit/actions/of%3Aenc%401", token: h.auditor).status == .ok)
            let plain = try await client.call(.get, "/v1/audit/actors/specialist:Sasha", token: h.auditor)
            let encoded = try await client.call(.get, "/v1/audit/actors/specialist%3ASasha", token: h.auditor)
            #expect(encoded.status == .ok && encoded.text == plain.text && encoded.json["count"] == 1, "\(encoded.text)")
            let bad = try await client.call(.get, "/v1/actions/of%20x", token: h.phone)
            #expect(bad.status == .badRequest && bad.code == "invalid_input")
        }
    }

    /// An auditor of another org learns nothing of this one: an actor's pages (and their
    /// tokens) hold only the auditor's org's entries, and replay counts that org's decisions.
    @Test func anAuditorOfAnotherOrgSeesNothingOfThisOne() async throws {
        let h = try ServerHarness()
        let now = ServerHarness.systemNow()
        let theirs = try h.ledger.issueToken(org: "other-org", scope: .auditor, subject: nil,
                                             expiresAt: now.adding(milliseconds: Timestamp.day), now: now).secret
        try await h.test { client in
            #expect(try await client.call(.post, "/v1/actions", token: h.specialist, json: proposalJSON("of-9", stakes: "low")).status == .created)
            #expect(try await client.call(.post, "/v1/actions/of-9/approve", token: h.phone).status == .ok)
            // The operator's rows in their org: the issue of their own token, and nothing of this org.
            let page = try await client.call(.get, "/v1/audit/actors/operator?limit=1", token: theirs)
            #expect(page.status == .ok && page.json["count"] == 1 && page.json["next_page_token"] == .null, "\(page.text)")
            if case .array(let items)? = page.json["items"] { #expect(items.first?["type"] == "token.issued", "\(page.text)") }
            let ours = try await client.call(.get, "/v1/audit/actors/operator?limit=1", token: h.auditor)
            #expect(ours.json["count"] == 1 && ours.json["next_page_token"] != .null, "\(ours.text)")
            let replay = try await client.call(.get, "/v1/audit/replay", token: theirs)
            // Its own org's one event: the issue of its token.
            #expect(replay.json["ok"] == .bool(true) && replay.json["decisions_confirmed"] == 0 && replay.json["events_judged"] == 1,
                    "\(replay.text)")
            let own = try await client.call(.get, "/v1/audit/replay", token: h.auditor)
            #expect(own.json["decisions_confirmed"] == 1, "\(own.text)")
            // The org's last page is full and the operator acts in another org after it: that
            // page's token is null, so nothing hints at the other org's entries.
            let all = try await client.call(.get, "/v1/audit/actors/operator?limit=1000", token: h.auditor)
            guard case .number(let n)? = all.json["count"] else { Issue.record("no count: \(all.text)"); return }
            try h.ledger.run(.linkDevice(device: "zed-phone", person: "zed", org: "other-org", label: "Z", platform: .ios),
                             now: ServerHarness.systemNow())
            let last = try await client.call(.get, "/v1/audit/actors/operator?limit=\(Int(n))", token: h.auditor)
            #expect(last.json["count"] == .number(n) && last.json["next_page_token"] == .null, "\(last.text)")
        }
    }

    /// A body not declared as JSON is refused unparsed (a browser sends text/plain and form
    /// bodies cross-origin without a preflight), on token-less routes too; nothing is written.
    @Test func aBodyNotDeclaredAsJSONIsRefused() async throws {
        let h = try ServerHarness()
        try await h.test { client in
            let head = try h.ledger.read { try $0.head().seq }
            for type in ["text/plain", "application/x-www-form-urlencoded", ""] {
                var headers: HTTPFields = [.authorization: "Bearer \(h.specialist)"]
                if !type.isEmpty { headers[.contentType] = type }
                let r = try await client.execute(uri: "/v1/actions", method: .post, headers: headers,
                                                 body: ByteBuffer(string: proposalJSON("of-csrf")))
                #expect(r.status == .unsupportedMediaType, "\(type): \(r.status)")
                let pairing = try await client.execute(uri: "/v1/devices", method: .post, headers: type.isEmpty ? [:] : [.contentType: type],
                                                       body: ByteBuffer(string: #"{"code": "12345678"}"#))
                #expect(pairing.status == .unsupportedMediaType, "\(type): \(pairing.status)")
            }
            // Also where no body is read: the pairing code route takes none.
            let pairing = try await client.execute(uri: "/v1/devices/pairing", method: .post,
                                                   headers: [.authorization: "Bearer \(h.phone)", .contentType: "text/plain"],
                                                   body: ByteBuffer(string: "x"))
            #expect(pairing.status == .unsupportedMediaType)
            let charset = try await client.execute(uri: "/v1/actions", method: .post,
                                                   headers: [.authorization: "Bearer \(h.specialist)", .contentType: "application/json; charset=utf-8"],
                                                   body: ByteBuffer(string: proposalJSON("of-ok")))
            #expect(charset.status == .created)
            #expect(try h.ledger.read { try $0.head().seq } == head + 1)
        }
    }

    /// A revoked device's token is no live token: its calls are limited per address as any
    /// refused secret's; a page token past every row gives an empty page, not the first;
    /// another person's device is not told whose the action is.
    @Test func revokedTokensAreLimitedAndTokensAndRefusalsTellNothing() async throws {
        let h = try ServerHarness(addressLimit: (rate: 1.0 / 60, burst: 3))
        try await h.test { client in
            #expect(try await client.call(.post, "/v1/actions", token: h.specialist, json: proposalJSON("of-p")).status == .created)
            let notOwned = try await client.call(.post, "/v1/actions/of-p/review", token: h.tablet)
            #expect(notOwned.code == "device_not_owned" && !notOwned.text.contains("quinn"), "\(notOwned.text)")
            // A page token is its query's: a forged one, or another listing's, is refused.
            for forged in [String(repeating: "f", count: 32), String(repeating: "f", count: 48), String(repeating: "0", count: 48)] {
                let r = try await client.call(.get, "/v1/audit/actors/operator?page_token=" + forged, token: h.auditor)
                #expect(r.status == .badRequest && r.code == "invalid_input", "\(r.text)")
            }
            let first = try await client.call(.get, "/v1/audit/actors/operator?limit=1", token: h.auditor)
            guard case .string(let token)? = first.json["next_page_token"] else { Issue.record("no token: \(first.text)"); return }
            #expect(try await client.call(.get, "/v1/audit/actors/operator?limit=1&page_token=\(token)", token: h.auditor).status == .ok)
            let elsewhere = try await client.call(.get, "/v1/audit/devices/phone-1?page_token=\(token)", token: h.auditor)
            #expect(elsewhere.status == .badRequest && elsewhere.code == "invalid_input", "\(elsewhere.text)")
            try h.ledger.run(.revokeDevice(device: "phone-1", reason: "lost"), now: ServerHarness.systemNow())
            var statuses: [HTTPResponse.Status] = []
            for _ in 0..<5 { statuses.append(try await client.call(.get, "/v1/today", token: h.phone).status) }
            #expect(statuses.prefix(3).allSatisfy { $0 == .forbidden } && statuses.last == .tooManyRequests, "\(statuses)")
        }
    }

    /// If-Match on a change is judged where policy.md §3 puts content: after the proof, the
    /// decision and the expiry. A signed change over old content is refused stale and
    /// recorded (its proof verified), and its replay is that first answer, byte for byte.
    @Test func changesAreJudgedInPolicyOrderAndASignedStaleOneIsRecorded() async throws {
        let key = TestDeviceKey()
        let h = try ServerHarness(keyedLaptop: key)
        let pem = key.pem
        try await h.test { client in
            let proposed = try await client.call(.post, "/v1/actions", token: h.specialist, json: proposalJSON("of-s", stakes: "medium"))
            guard case .string(let original)? = proposed.json["action", "content_hash"] else { Issue.record("no hash"); return }
            #expect(try await client.call(.post, "/v1/actions/of-s/edit", token: h.phone, json: #"{"text": "v2"}"#).status == .ok)
            let stale: HTTPFields = [.ifMatch: "\"\(original)\""]
            let own = try await client.call(.post, "/v1/actions/of-s/dismiss", token: h.phone, json: #"{"reason": "x"}"#, headers: stale)
            #expect(own.status == .preconditionFailed && own.code == "stale_content")
            let unsigned = try await client.call(.post, "/v1/actions/of-s/dismiss", token: h.laptop, json: #"{"reason": "x"}"#, headers: stale)
            #expect(unsigned.status == .forbidden && unsigned.code == "proof_required", "\(unsigned.text)")
            let head = try h.ledger.read { try $0.head().seq }
            let now = ServerHarness.systemNow()
            let statement = try h.ledger.statement(for: .dismiss(actionId: "of-s", device: "laptop-1", reason: "no"), commandId: "cmd-stale-1",
                                                   claimedAt: now, contentHash: Digest(hex: original))
            let signature = Data(try P256Signature.sign(statement.bytes, pemPrivateKey: pem).signature).base64EncodedString()
            let body = #"{"reason": "no", "content_hash": "\#(original)", "claimed_at": "\#(now.iso8601)", "proof": {"format": "p256", "signature": "\#(signature)"}}"#
            let first = try await client.call(.post, "/v1/actions/of-s/dismiss", token: h.laptop, json: body, headers: [.idempotencyKey: "cmd-stale-1"])
            #expect(first.status == .preconditionFailed && first.code == "stale_content", "\(first.text)")
            #expect(try h.ledger.read { try $0.head().seq } == head + 1)  // tap.refused
            let again = try await client.call(.post, "/v1/actions/of-s/dismiss", token: h.laptop, json: body, headers: [.idempotencyKey: "cmd-stale-1"])
            #expect(again.status == .preconditionFailed && again.text == first.text && again.headers[.idempotentReplayed] == "true")
            #expect(try h.ledger.read { try $0.head().seq } == head + 1)
            // Decided: already_decided comes before content.
            #expect(try await client.call(.post, "/v1/actions/of-s/review", token: h.phone).status == .ok)
            #expect(try await client.call(.post, "/v1/actions/of-s/approve", token: h.phone).status == .ok)
            let decided = try await client.call(.post, "/v1/actions/of-s/dismiss", token: h.phone, json: #"{"reason": "x"}"#, headers: stale)
            #expect(decided.status == .conflict && decided.code == "already_decided", "\(decided.text)")
        }
    }

    /// A step's body takes that step's fields only: an edit's text posted to /review is
    /// refused, not recorded as a review.
    @Test func aStepRefusesAnotherStepsFields() async throws {
        let h = try ServerHarness()
        try await h.test { client in
            #expect(try await client.call(.post, "/v1/actions", token: h.specialist, json: proposalJSON("of-7")).status == .created)
            let head = try h.ledger.read { try $0.head().seq }
            for (step, body) in [("review", #"{"text": "new caption"}"#), ("dismiss", #"{"user_verified": true}"#),
                                 ("edit", #"{"text": "x", "until": "2099-01-01T00:00:00Z"}"#), ("hold", #"{"until": "2099-01-01T00:00:00Z", "reason": "x"}"#)] {
                let r = try await client.call(.post, "/v1/actions/of-7/\(step)", token: h.phone, json: body)
                #expect(r.status == .badRequest && r.code == "invalid_input", "\(step): \(r.status) \(r.text)")
            }
            #expect(try h.ledger.read { try $0.head().seq } == head)
        }
    }
}
