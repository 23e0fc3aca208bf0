import Foundation
import Testing
@testable import ActionLedger
@testable import LedgerServer

/// A log whose last event a clock running ahead dated refuses writes until the clock gets
/// there: over HTTP the 503 says how long (`Retry-After`), not one second.
@Suite struct ClockBehindTests {
    @Test func clockBehindAnswersTheRealWait() async throws {
        let h = try ServerHarness()
        try h.ledger.run(.propose(proposal("ahead-1")), now: ServerHarness.systemNow().adding(milliseconds: Timestamp.day))
        try await h.test { client in
            let refused = try await client.call(.post, "/v1/actions", token: h.specialist, json: proposalJSON("after-1"))
            #expect(refused.status == .serviceUnavailable && refused.code == "clock_behind", "\(refused.text)")
            let wait = try #require(refused.headers[.retryAfter].flatMap(Int.init))
            // A day less the 10 s tolerance, less the moments this test took.
            #expect((86_300...86_390).contains(wait), "Retry-After \(wait)")
            #expect(refused.json["writable_at"] != nil)
        }
    }
}
