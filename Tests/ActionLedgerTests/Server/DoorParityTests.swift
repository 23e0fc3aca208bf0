import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
@testable import ActionLedger
@testable import LedgerServer

/// The HTTP API and the CLI are two doors to one set of rules: what one refuses the other
/// refuses, and neither drops what a caller sent without a word (a parity attack found both).
@Suite struct DoorParityTests {
    @Test func theServerRefusesWhatTheCLIRefuses() async throws {
        let h = try ServerHarness()
        try await h.test { client in
            func refused(_ r: TestResponse, _ what: String) {
                #expect(r.status == .badRequest && r.code == "invalid_input", "\(what): \(r.status) \(r.text)")
            }
            let before = try h.ledger.read { try $0.head().seq }
            // Idempotency-Key and the body's command_id both name the command id: two different ones.
            var body = proposalJSON("p-ids")
            body.insert(contentsOf: #""command_id":"in-body","#, at: body.index(after: body.startIndex))
            refused(try await client.call(.post, "/v1/actions", token: h.specialist, json: body,
                                          headers: [HTTPField.Name("Idempotency-Key")!: "in-header"]), "two command ids")
            // A claimed time with no proof to bind it.
            #expect(try await client.call(.post, "/v1/actions", token: h.specialist, json: proposalJSON("p-claim")).status == .created)
            refused(try await client.call(.post, "/v1/actions/p-claim/review", token: h.phone, json: #"{"claimed_at":"garbage"}"#),
                    "claimed_at without a proof")
            // A query parameter given twice.
            refused(try await client.call(.get, "/v1/today?limit=1&limit=2", token: h.phone), "limit twice")
            refused(try await client.call(.get, "/v1/audit/actors/quinn?since=1h&since=2h", token: h.auditor), "since twice")
            // Durations as openapi states them.
            for since in ["+1h", "01h", "10000000000s"] {
                refused(try await client.call(.get, "/v1/audit/actors/quinn?since=\(since)", token: h.auditor), "since \(since)")
            }
            #expect(try await client.call(.get, "/v1/audit/actors/quinn?since=9999999999s", token: h.auditor).status == .ok)
            #expect(try h.ledger.read { try $0.head().seq } == before + 1, "only the one proposal was written")
            // An outcome document of 32 levels, which the CLI takes, goes through the body that wraps it.
            #expect(try await client.call(.post, "/v1/actions", token: h.specialist, json: proposalJSON("p-deep", stakes: "low")).status == .created)
            _ = try h.ledger.run(.tap(.approve, actionId: "p-deep", device: "phone-1"), now: ServerHarness.systemNow())
            let deep = String(repeating: #"{"a":"#, count: 31) + "{}" + String(repeating: "}", count: 31)
            let outcome = try await client.call(.post, "/v1/actions/p-deep/outcome", token: h.specialist,
                                                json: #"{"status":"executed","outcome":"# + deep + "}")
            #expect(outcome.status == .ok, "\(outcome.status) \(outcome.text)")
        }
    }
}
