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
            #expect(try await client.call(.get, "/healthz").status == .ok)
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
