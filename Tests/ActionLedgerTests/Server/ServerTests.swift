import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
@testable import ActionLedger
@testable import LedgerServer

/// `ledger serve` over a real store: the approval flow, scopes, refusals as problem
/// documents, idempotency and If-Match.
@Suite struct ServerTests {
    @Test func healthAndRefusalsAreProblemDocuments() async throws {
        let h = try ServerHarness()
        try await h.test { client in
            let health = try await client.call(.get, "/healthz")
            #expect(health.status == .ok && health.text == #"{"status":"ok"}"#)
            let none = try await client.call(.get, "/v1/today")
            #expect(none.status == .unauthorized && none.code == "unauthorized")
            #expect(none.headers[.contentType] == "application/problem+json")
            #expect(try await client.call(.get, "/v1/today", token: "alt_nope").status == .unauthorized)
            let missing = try await client.call(.get, "/v1/nothing-here", token: h.phone)
            #expect(missing.status == .notFound && missing.code == "not_found")
            let bad = try await client.call(.post, "/v1/actions", token: h.specialist, json: "{\"action_id\": 7}")
            #expect(bad.status == .badRequest && bad.code == "invalid_input")
            #expect(try await client.call(.post, "/v1/actions", token: h.specialist, json: proposalJSON("m1")).status == .created)
            let metrics = try await client.call(.get, "/metrics")
            #expect(metrics.status == .ok && metrics.text.contains("ledger_commands_committed_total 1"))
            #expect(metrics.text.contains(#"ledger_http_requests_total{route="/v1/actions",method="POST",status="400"} 1"#))
            #expect(metrics.text.contains("ledger_http_request_duration_seconds_bucket"))
            let served = try await client.call(.get, "/openapi.yaml")
            let committed = try String(contentsOf: OpenAPIDocumentTests.spec, encoding: .utf8)
            #expect(served.status == .ok && served.text == committed && served.headers[.contentType] == "application/yaml")
            let wrongMethod = try await client.call(.delete, "/v1/actions/a1/review", token: h.phone)
            #expect(wrongMethod.status == .methodNotAllowed && wrongMethod.headers[.allow] == "POST")
        }
    }

    @Test func crossDeviceHighStakesApproval() async throws {
        let h = try ServerHarness()
        try await h.test { client in
            let proposed = try await client.call(.post, "/v1/actions", token: h.specialist, json: proposalJSON("of-1"))
            #expect(proposed.status == .created)
            #expect(proposed.json["action", "next_tap"] == "review")
            #expect(try await client.call(.post, "/v1/actions/of-1/review", token: h.phone).status == .ok)
            #expect(try await client.call(.post, "/v1/actions/of-1/confirm", token: h.phone).status == .ok)
            let noUV = try await client.call(.post, "/v1/actions/of-1/approve", token: h.laptop)
            #expect(noUV.status == .conflict && noUV.code == "user_verification_required")
            let approved = try await client.call(.post, "/v1/actions/of-1/approve", token: h.laptop, json: #"{"user_verified": true}"#)
            #expect(approved.status == .ok && approved.json["action", "state"] == "approved")
            let again = try await client.call(.post, "/v1/actions/of-1/approve", token: h.phone, json: #"{"user_verified": true}"#)
            #expect(again.status == .conflict && again.code == "already_decided")
            let shown = try await client.call(.get, "/v1/actions/of-1", token: h.phone)
            #expect(shown.json["action", "decision", "device"] == "laptop-1")
            let outcome = try await client.call(.post, "/v1/actions/of-1/outcome", token: h.specialist,
                                                json: #"{"status": "executed", "outcome": {"post_id": "p1"}}"#)
            #expect(outcome.status == .ok && outcome.json["action", "state"] == "executed")
            let trail = try await client.call(.get, "/v1/audit/actions/of-1", token: h.auditor)
            #expect(trail.status == .ok && trail.json["state"] == "executed")
            let byLaptop = try await client.call(.get, "/v1/audit/devices/laptop-1", token: h.auditor)
            #expect(byLaptop.status == .ok && byLaptop.text.contains("action.approved"))
            let quinn = try await client.call(.get, "/v1/audit/actors/quinn", token: h.auditor)
            #expect(quinn.status == .ok && quinn.text.contains("action.reviewed"))
            let timeline = try await client.call(.get, "/v1/audit/activity?person=quinn&type=action.approved,action.executed", token: h.auditor)
            #expect(timeline.status == .ok && timeline.text.contains("action.approved") && !timeline.text.contains("action.reviewed"))
            let today = try await client.call(.get, "/v1/today", token: h.phone)
            #expect(today.status == .ok)
        }
    }

    @Test func scopesAndOwnership() async throws {
        let h = try ServerHarness()
        try await h.test { client in
            #expect(try await client.call(.post, "/v1/actions", token: h.phone, json: proposalJSON("a1")).code == "forbidden")
            let otherAgent = try await client.call(.post, "/v1/actions", token: h.specialist, json: proposalJSON("a1", agent: "x-bot"))
            #expect(otherAgent.status == .forbidden)
            #expect(try await client.call(.post, "/v1/actions", token: h.specialist, json: proposalJSON("a1", stakes: "medium")).status == .created)
            #expect(try await client.call(.post, "/v1/actions/a1/review", token: h.auditor).status == .forbidden)
            // dana's tablet cannot see or tap quinn's action.
            #expect(try await client.call(.get, "/v1/actions/a1", token: h.tablet).status == .notFound)
            let notOwned = try await client.call(.post, "/v1/actions/a1/review", token: h.tablet)
            #expect(notOwned.status == .forbidden && notOwned.code == "device_not_owned")
            #expect(try await client.call(.get, "/v1/audit/replay", token: h.phone).status == .forbidden)
            let replay = try await client.call(.get, "/v1/audit/replay", token: h.auditor)
            #expect(replay.status == .ok && replay.json["ok"] == .bool(true))
        }
    }

    @Test func idempotencyKeyReplaysAndStaleIfMatchIsRefused() async throws {
        let h = try ServerHarness()
        try await h.test { client in
            let proposed = try await client.call(.post, "/v1/actions", token: h.specialist, json: proposalJSON("a2", stakes: "medium"))
            guard case .string(let original)? = proposed.json["action", "content_hash"] else { Issue.record("no content hash"); return }
            let key: HTTPFields = [.idempotencyKey: "cmd-phone-offline-1"]
            let first = try await client.call(.post, "/v1/actions/a2/review", token: h.phone, headers: key)
            let replay = try await client.call(.post, "/v1/actions/a2/review", token: h.phone, headers: key)
            #expect(first.status == .ok && replay.status == .ok)
            #expect(first.headers[.idempotentReplayed] == nil)
            #expect(replay.headers[.idempotentReplayed] == "true")
            #expect(replay.text == first.text)  // the original body, byte for byte
            let head = try h.ledger.read { try $0.head().seq }
            let edited = try await client.call(.post, "/v1/actions/a2/edit", token: h.laptop, json: #"{"text": "New set, 9pm"}"#)
            #expect(edited.status == .ok)
            let stale = try await client.call(.post, "/v1/actions/a2/approve", token: h.laptop,
                                              headers: [.ifMatch: "\"\(original)\""])
            #expect(stale.status == .preconditionFailed && stale.code == "stale_content")
            // If-Match and the body's content_hash must agree when both are sent.
            let current = try h.ledger.read { try $0.actionState("a2")!.contentHash.hex }
            let split = try await client.call(.post, "/v1/actions/a2/approve", token: h.laptop, json: #"{"content_hash": "\#(current)"}"#,
                                              headers: [.ifMatch: "\"\(original)\""])
            #expect(split.status == .badRequest && split.code == "invalid_input", "\(split.text)")
            #expect(try h.ledger.read { try $0.head().seq } == head + 1)  // the edit only
        }
    }

    @Test func revokedTokensAndDevicesAreRefusedAtOnce() async throws {
        let h = try ServerHarness()
        try await h.test { client in
            #expect(try await client.call(.get, "/v1/today", token: h.laptop).status == .ok)
            // As the CLI does, in the same store while the server runs.
            try h.ledger.revokeToken(h.laptopTokenId, now: ServerHarness.systemNow())
            #expect(try await client.call(.get, "/v1/today", token: h.laptop).status == .unauthorized)
            #expect(try await client.call(.get, "/v1/today", token: h.phone).status == .ok)
            try h.ledger.run(.revokeDevice(device: "phone-1", reason: "lost"), now: ServerHarness.systemNow())
            let refused = try await client.call(.get, "/v1/today", token: h.phone)
            #expect(refused.status == .forbidden && refused.code == "device_revoked")
        }
    }

    @Test func rateLimitsAndCORS() async throws {
        // A bucket of 3 refilled once a minute: however slowly a loaded machine makes the
        // calls below, none is refilled in between (at 3 a second one could be).
        let h = try ServerHarness(rateLimit: (rate: 1.0 / 60, burst: 3))
        try await h.test { client in
            var statuses: [HTTPResponse.Status] = []
            for _ in 0..<5 { statuses.append(try await client.call(.get, "/v1/today", token: h.phone).status) }
            #expect(statuses.prefix(3).allSatisfy { $0 == .ok } && statuses.last == .tooManyRequests)
            let limited = try await client.call(.get, "/v1/today", token: h.phone)
            #expect(limited.code == "rate_limited" && limited.headers[.retryAfter] != nil)
            // Another token has its own bucket.
            #expect(try await client.call(.get, "/v1/today", token: h.laptop).status == .ok)
            let preflight = try await client.call(.options, "/v1/actions/a1/approve",
                                                  headers: [.origin: "https://app.example.com", .accessControlRequestMethod: "POST"])
            #expect(preflight.status == .noContent && preflight.headers[.accessControlAllowOrigin] == "https://app.example.com")
            let refused = try await client.call(.get, "/v1/today", headers: [.origin: "https://app.example.com"])
            #expect(refused.status == .unauthorized && refused.headers[.accessControlAllowOrigin] == "https://app.example.com")
            let stranger = try await client.call(.get, "/healthz", headers: [.origin: "https://evil.example"])
            #expect(stranger.headers[.accessControlAllowOrigin] == nil)
        }
    }

    @Test func bodiesAreBoundedAndRemoteBindingNeedsConsent() async throws {
        let h = try ServerHarness()
        try await h.test { client in
            let huge = "{\"text\": \"" + String(repeating: "x", count: 1 << 20) + "\"}"
            _ = try await client.call(.post, "/v1/actions", token: h.specialist, json: proposalJSON("a1", stakes: "medium"))
            let refused = try await client.call(.post, "/v1/actions/a1/edit", token: h.phone, json: huge)
            #expect(refused.status == .contentTooLarge && refused.code == "payload_too_large", "\(refused.status) \(refused.text)")
        }
        var configuration = LedgerServer.Configuration(clock: { ServerHarness.systemNow() })
        configuration.host = "0.0.0.0"
        #expect(throws: LedgerError.self) { _ = try LedgerServer(ledger: h.ledger, storePath: h.temp.path, configuration: configuration) }
        configuration.allowRemote = true
        _ = try LedgerServer(ledger: h.ledger, storePath: h.temp.path, configuration: configuration)
    }
}
