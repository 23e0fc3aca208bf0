import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
@testable import ActionLedger
@testable import LedgerServer

/// `GET /v1/events`: the catch-up, the live stream fed by the hub, and streams closing on revocation.
@Suite struct StreamTests {
    @Test func catchUpAsJSONLinesShowsOnlyWhatTheTokenMaySee() async throws {
        let h = try ServerHarness()
        try await h.test { client in
            _ = try await client.call(.post, "/v1/actions", token: h.specialist, json: proposalJSON("q1", stakes: "medium"))
            _ = try await client.call(.post, "/v1/actions", token: h.specialist, json: proposalJSON("d1", stakes: "medium", person: "dana"))
            let accept: HTTPFields = [.accept: "application/x-ndjson"]
            let quinn = try await client.call(.get, "/v1/events?from=1", token: h.phone, headers: accept)
            let lines = quinn.text.split(separator: "\n").map { try? JSONParser.parse(String($0)) }
            #expect(quinn.status == .ok && !lines.isEmpty)
            #expect(lines.allSatisfy { $0?["person"] == "quinn" })
            #expect(lines.contains { $0?["action_id"] == "q1" })
            let all = try await client.call(.get, "/v1/events?from=1", token: h.auditor, headers: accept)
            #expect(all.text.contains("\"d1\"") && all.text.contains("token.issued"))
            let resumed = try await client.call(.get, "/v1/events", token: h.auditor,
                                                headers: [.accept: "application/x-ndjson", .lastEventID: "7"])
            #expect(resumed.text.split(separator: "\n").first.map { (try? JSONParser.parse(String($0)))?["seq"] } == .number(8))
        }
    }

    @Test func liveStreamCarriesEveryEventAndClosesWhenTheDeviceIsRevoked() async throws {
        let h = try ServerHarness()
        // Resume from the head as it is now: the stream carries everything after it however
        // late it connects (a loaded machine may open it after the events below).
        let start = try h.ledger.read { try $0.head().seq }
        try await h.test { client in
            async let stream = streamed(port: client.port, "/v1/events", token: h.laptop, headers: [.lastEventID: "\(start)"])
            _ = try await client.call(.post, "/v1/actions", token: h.specialist, json: proposalJSON("s1", stakes: "medium"))
            _ = try await client.call(.post, "/v1/actions/s1/review", token: h.phone)
            // The CLI appends to the same store: the hub tails the log, so the stream sees it too.
            try h.ledger.run(.revokeDevice(device: "laptop-1", reason: "sold"), now: ServerHarness.systemNow())
            let (head, text) = try await stream
            #expect(head.headerFields[.contentType] == "text/event-stream")
            let ids = text.split(separator: "\n").filter { $0.hasPrefix("id: ") }.compactMap { UInt64($0.dropFirst(4)) }
            #expect(ids == ids.sorted() && Set(ids).count == ids.count)
            #expect(text.contains("\"action.proposed\"") && text.contains("\"action.reviewed\""))
            #expect(text.contains("\"device.revoked\""))
            #expect(try await client.call(.get, "/v1/events", token: h.laptop).code == "device_revoked")
        }
    }

    /// A token that expires while its stream is open ends the stream at the next heartbeat.
    @Test func aStreamEndsWhenItsTokenExpires() async throws {
        // The server's clock is the test's: it passes the token's expiry while the stream is open.
        let skew = Locked<Int64>(0)
        let h = try ServerHarness(clock: { ServerHarness.systemNow().adding(milliseconds: skew.value) })
        let now = ServerHarness.systemNow()
        let brief = try h.ledger.issueToken(org: "quinn-co", scope: .device, subject: "phone-1",
                                            expiresAt: now.adding(milliseconds: Timestamp.day), now: now)
        try await h.test { client in
            async let stream = streamed(port: client.port, "/v1/events", token: brief.secret)
            // Move the clock only once the stream is open (a loaded machine may take a while).
            let opening = ContinuousClock.now
            while !h.server.hub.isConnected("phone-1"), ContinuousClock.now - opening < .seconds(15) {
                try await Task.sleep(for: .milliseconds(20))
            }
            let moved = ContinuousClock.now
            skew.update { $0 = 2 * Timestamp.day }
            let (head, text) = try await stream
            #expect(head.status == .ok && text.contains(": connected"))
            // Ended at a heartbeat (every 0.3 s) after the expiry, not by the client's 20 s timeout.
            #expect(ContinuousClock.now - moved < .seconds(10))
            #expect(try await client.call(.get, "/v1/today", token: brief.secret).status == .unauthorized)
        }
    }

    @Test func ticketsAreSingleUse() async throws {
        let h = try ServerHarness()
        try await h.test { client in
            let ticket = try await client.call(.post, "/v1/streams/tickets", token: h.auditor)
            guard case .string(let t)? = ticket.json["ticket"] else { Issue.record("no ticket"); return }
            let accept: HTTPFields = [.accept: "application/x-ndjson"]
            #expect(try await client.call(.get, "/v1/events?from=1&ticket=\(t)", headers: accept).status == .ok)
            #expect(try await client.call(.get, "/v1/events?from=1&ticket=\(t)", headers: accept).status == .unauthorized)
            // A ticket dies with its token.
            let laptopTicket = try await client.call(.post, "/v1/streams/tickets", token: h.laptop)
            guard case .string(let lt)? = laptopTicket.json["ticket"] else { Issue.record("no ticket"); return }
            try h.ledger.revokeToken(h.laptopTokenId, now: ServerHarness.systemNow())
            #expect(try await client.call(.get, "/v1/events?from=1&ticket=\(lt)", headers: accept).status == .unauthorized)
        }
    }
}
