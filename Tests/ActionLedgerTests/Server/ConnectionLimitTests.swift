import Foundation
import Testing
@testable import ActionLedger
@testable import LedgerServer

/// One client cannot hold the server's connections: a body trickled a byte at a time is cut
/// at the deadline, and one address keeps no more than its share open.
@Suite struct ConnectionLimitTests {
    @Test func aTrickledBodyIsCutAtTheDeadline() async throws {
        let h = try ServerHarness(idleTimeout: .milliseconds(500))
        try await h.test { client in
            let c = try RawConnection(port: client.port!)
            let body = #"{"x": 1}"#
            try c.send("POST /v1/actions HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(h.specialist)\r\n"
                + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count + 40)\r\n\r\n\(body)")
            // A byte every 150 ms: never idle for the 500 ms timeout, never done either.
            for _ in 0..<20 {
                try? c.send(" ")
                try await Task.sleep(for: .milliseconds(150))
            }
            try? c.send(String(repeating: " ", count: 20))
            // The request was cut, so it is never answered (a live one would get 400 for its field).
            #expect(!(await c.read(until: "HTTP/1.1", within: 2)).contains("HTTP/1.1"))
            // (The test client's own connection idled out meanwhile: a fresh one asks.)
            let after = try RawConnection(port: client.port!)
            try after.send("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
            #expect(await after.read(until: "\"ok\"", within: 20).hasPrefix("HTTP/1.1 200"))
        }
    }

    @Test func oneAddressHoldsItsShareOfConnections() async throws {
        let h = try ServerHarness(connectionsPerAddress: 3)
        try await h.test { client in
            let port = client.port!
            // Connections are answered until the address holds its share (the test client may
            // hold one of them already); the next is closed unanswered.
            var held: [RawConnection] = []
            var refused = false
            while !refused && held.count < 6 {
                let c = try RawConnection(port: port)
                try? c.send("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
                // A refused connection is closed at once (the read ends there); an answer may be
                // slow while the rest of the suite loads both cores, so it is given time.
                if await c.read(until: "\"ok\"", within: 30).hasPrefix("HTTP/1.1 200") { held.append(c) } else { refused = true }
            }
            #expect(refused && (2...3).contains(held.count), "\(held.count) answered")
            // Counted where an operator looks (a proxy not named --trusted-proxy shows there).
            #expect(h.server.metrics.text.contains("ledger_connections_refused_total 1"), "\(h.server.metrics.text)")
            // Once one closes, its place is free again.
            held.removeFirst()
            var answered = false
            for _ in 0..<50 where !answered {
                try await Task.sleep(for: .milliseconds(100))
                let next = try RawConnection(port: port)
                try? next.send("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
                answered = await next.read(until: "\"ok\"", within: 1).hasPrefix("HTTP/1.1 200")
            }
            #expect(answered)
            withExtendedLifetime(held) {}
        }
    }

    /// An open-file limit that leaves too few connections is refused at start, not served
    /// one client at a time.
    @Test func aServerIsNotStartedWithTooFewDescriptors() throws {
        let t = try TempLedger()
        try t.ledger.link("iphone")
        let path = t.path
        let out = try Child("/bin/sh", ["-c", "ulimit -n 200 && exec \"$LEDGER\" serve --db \"$DB\" --listen 127.0.0.1:0"],
                            environment: ["LEDGER": LedgerProcess.binary, "DB": path], label: "serve").finish(within: 60)
        #expect(out.status == LedgerError.Code.invalidInput.exitStatus && out.stderr.contains("raise ulimit -n"), "\(out.status) \(out.stderr)")
    }
}
