import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import ActionLedger
@testable import LedgerServer

/// What the server does with connections themselves: HEAD answered as GET without a body,
/// and connections that hold the server with nothing under way closed after the idle timeout.
@Suite struct ConnectionTests {
    @Test func headAnswersWhatGetWouldWithoutABody() async throws {
        let h = try ServerHarness()
        try await h.test { client in
            let get = try await client.call(.get, "/v1/today", token: h.laptop)
            let head = try await client.call(.head, "/v1/today", token: h.laptop)
            #expect(head.status == .ok && head.body.readableBytes == 0)
            #expect(head.headers[.contentType] == get.headers[.contentType] && head.headers[.cacheControl] == "no-store")
            // GET's length, not 0 (the router's own HEAD-from-GET said 0 for every route).
            #expect(head.headers[.contentLength] == String(get.body.readableBytes), "\(head.headers)")
            // A refusal too: its status and headers, no problem document after them.
            let refused = try await client.call(.head, "/v1/today")
            #expect(refused.status == .unauthorized && refused.body.readableBytes == 0)
            #expect(refused.headers[.contentType] == "application/problem+json")
            // 405's Allow names HEAD beside GET; a POST route does not answer HEAD.
            let post = try await client.call(.head, "/v1/actions", token: h.specialist)
            #expect(post.status == .methodNotAllowed && post.headers[.allow] == "POST")
            #expect(try await client.call(.put, "/v1/today", token: h.laptop).headers[.allow] == "GET, HEAD")
            // HEAD on the live stream opens none; the same connection still answers GET after it.
            let stream = try await client.call(.head, "/v1/events", token: h.laptop)
            #expect(stream.status == .ok && stream.headers[.contentType] == "text/event-stream" && stream.body.readableBytes == 0)
            #expect(h.server.hub.openStreams == 0)
            #expect(stream.headers[.contentLength] == nil, "a stream has no length: \(stream.headers)")
            // A stream ticket is spent by the GET it opens, not by a HEAD (which opens nothing).
            let issued = try await client.call(.post, "/v1/streams/tickets", token: h.laptop)
            guard case .string(let ticket)? = issued.json["ticket"] else { Issue.record("no ticket: \(issued.text)"); return }
            #expect(try await client.call(.head, "/v1/events?ticket=\(ticket)").status == .ok)
            let caughtUp = try await client.call(.get, "/v1/events?ticket=\(ticket)", headers: [.accept: "application/x-ndjson"])
            #expect(caughtUp.status == .ok && caughtUp.headers[.contentType] == "application/x-ndjson")
            #expect(try await client.call(.head, "/v1/events?ticket=\(ticket)").status == .unauthorized)
            let after = try await client.call(.get, "/v1/today", token: h.laptop)
            #expect(after.status == .ok && after.json["items"] == get.json["items"])
        }
    }

    /// A body that cannot be read (a malformed chunk size) is the client's error: 400, not 500.
    @Test func aMalformedChunkedBodyIsABadRequest() async throws {
        let h = try ServerHarness()
        try await h.test { client in
            for size in ["zz", "FFFFFFFFFFFFFFFFFF"] {
                let c = try RawConnection(port: client.port!)
                try c.send("POST /v1/actions HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(h.specialist)\r\n"
                    + "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n\(size)\r\n{}\r\n0\r\n\r\n")
                let answer = await c.read(until: "\r\n\r\n", within: 20)
                #expect(answer.hasPrefix("HTTP/1.1 400"), "\(size): \(answer)")
            }
            // A declared length over the limit is refused at once, before any of the body is sent
            // (a client waiting on `Expect: 100-continue` is not left to time out and upload it).
            let big = try RawConnection(port: client.port!)
            try big.send("POST /v1/actions HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(h.specialist)\r\n"
                + "Content-Type: application/json\r\nContent-Length: 2000000\r\nExpect: 100-continue\r\n\r\n")
            let answer = await big.read(until: "\r\n\r\n", within: 20)
            #expect(answer.hasPrefix("HTTP/1.1 413"), "\(answer)")
            #expect(try await client.call(.get, "/healthz").status == .ok)
        }
    }

    /// A request that does not ask to keep its connection (HTTP/1.0 by default, a `close`
    /// token in any case) is answered and the connection closed at once: such a client reads
    /// its answer until the server closes, and had waited for the idle timeout.
    @Test func aConnectionNotKeptAliveClosesAfterItsAnswer() async throws {
        let h = try ServerHarness(idleTimeout: .seconds(600))
        try await h.test { client in
            let port = client.port!
            for head in ["GET /healthz HTTP/1.0\r\n", "GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: Close\r\n",
                         "GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive, close\r\n",
                         "GET /healthz HTTP/1.0\r\nConnection: keep-alive, close\r\n"] {
                let c = try RawConnection(port: port)
                try c.send(head + "\r\n")
                let answer = await c.readUntilClosed(within: 30)
                // Answered in the request's own version.
                let version = head.contains("HTTP/1.0") ? "HTTP/1.0" : "HTTP/1.1"
                #expect(answer?.hasPrefix(version + " 200") == true && answer?.contains("\"ok\"") == true, "\(head): \(answer ?? "not closed")")
                // The answer says the connection closes (an HTTP/1.0 client trusts a keep-alive).
                let said = answer?.lowercased() ?? ""
                #expect(said.contains("connection: close") && !said.contains("keep-alive"), "\(head): \(answer ?? "")")
            }
            // HTTP/1.0 asking to keep it: two requests answered on one connection, which stays open.
            let kept = try RawConnection(port: port)
            for n in 1...2 {
                try kept.send("GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
                let answer = await kept.read(until: "\"ok\"", within: 20)
                #expect(answer.hasPrefix("HTTP/1.0 200") && answer.lowercased().contains("connection: keep-alive"), "request \(n): \(answer)")
            }
            #expect(await kept.readUntilClosed(within: 1) == nil)
            // An answer of no known length to HTTP/1.0 (the events as JSON Lines) comes without
            // chunks, which HTTP/1.0 does not have, and ends with the connection, keep-alive or not.
            try h.ledger.run(.propose(proposal("one-oh")), now: ServerHarness.systemNow())
            let lines = try RawConnection(port: port)
            try lines.send("GET /v1/events?from=1 HTTP/1.0\r\nConnection: keep-alive\r\nAuthorization: Bearer \(h.auditor)\r\n"
                + "Accept: application/x-ndjson\r\n\r\n")
            let answer = await lines.readUntilClosed(within: 30) ?? "not closed"
            let (head, body) = (answer.components(separatedBy: "\r\n\r\n").first ?? "", answer.components(separatedBy: "\r\n\r\n").dropFirst().joined())
            #expect(head.hasPrefix("HTTP/1.0 200") && !head.lowercased().contains("transfer-encoding")
                    && head.lowercased().contains("connection: close"), "\(head)")
            #expect(body.hasPrefix("{\"seq\":") && body.contains("one-oh"), "\(body.prefix(200))")
        }
    }

    /// A seq gone from the log under a running server: a catch-up sends the events before
    /// it, then cuts the stream (no closing chunk: an end that reads as complete would hide
    /// the gap).
    @Test func aStreamSendsWhatPrecedesDamageThenIsCut() async throws {
        let h = try ServerHarness()
        try await h.test { client in
            let head = try h.ledger.read { try $0.head().seq }
            let gone = head - 1
            // The token known first (a server that meets the damage reading tokens answers 500 with it).
            _ = try await client.call(.get, "/v1/audit/proofs", token: h.auditor)
            #expect(try Self.deleteEvent(gone, from: h.ledger))
            let c = try RawConnection(port: client.port!)
            try c.send("GET /v1/events?from=1 HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(h.auditor)\r\n"
                + "Accept: application/x-ndjson\r\n\r\n")
            // Judged by what arrives, not by the FIN (other tests' children may hold the socket).
            let answer = await c.read(until: "\r\n0\r\n\r\n", within: 5)
            #expect(answer.hasPrefix("HTTP/1.1 200") && answer.contains("\"seq\":\(gone - 1),"), "\(answer.suffix(300))")
            #expect(!answer.contains("\"seq\":\(gone),") && !answer.contains("\r\n0\r\n\r\n"), "\(answer.suffix(200))")
            // As Server-Sent Events: the events before it, then why, and a minute before the
            // EventSource comes back (it had reconnected every 2 s into the same cut).
            let sse = try RawConnection(port: client.port!)
            try sse.send("GET /v1/events?from=1 HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(h.auditor)\r\n\r\n")
            let told = await sse.read(until: "missing_seq", within: 5)
            #expect(told.contains("id: \(gone - 1)\n") && !told.contains("id: \(gone)\n"), "\(told.suffix(300))")
            #expect(told.contains("retry: 60000\nevent: ledger_error\ndata: {\"error\":{\"code\":\"integrity_failure\""),
                    "\(told.suffix(300))")
        }
    }

    /// Damage: the event at `seq` deleted from the log (a write transaction, on this thread).
    static func deleteEvent(_ seq: UInt64, from ledger: Ledger) throws -> Bool {
        try ledger.environment.write { txn in
            guard let events = try txn.openDatabase("events", create: false) else { return false }
            return try txn.delete(events, key: Keys.u64(seq))
        }
    }

    @Test func anIdleOrStalledConnectionIsClosedButALiveStreamIsNot() async throws {
        let h = try ServerHarness(idleTimeout: .milliseconds(300))
        try await h.test { client in
            let port = client.port!
            // Part of a request's head, then nothing: the server drops the connection, so the
            // rest of the request, sent after the timeout, is never answered. (Judged by the
            // answer, not by the FIN: this test process spawns other tests' children, which
            // inherit the server's sockets and can hold them open at the TCP level.)
            let stalled = try RawConnection(port: port)
            try stalled.send("GET /healthz HTTP/1.1\r\nHost: localhost\r\n")
            // Ten timeouts' wait: a server slowed by the rest of the suite has still fired its timer.
            try await Task.sleep(for: .seconds(3))
            try? stalled.send("\r\n")
            #expect(!(await stalled.read(until: "HTTP/1.1", within: 2)).contains("HTTP/1.1"))
            // A whole request answered, then idle: the next request on it goes unanswered.
            let idle = try RawConnection(port: port)
            try idle.send("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
            #expect(await idle.read(until: "\"ok\"", within: 20).hasPrefix("HTTP/1.1 200"))
            try await Task.sleep(for: .seconds(3))
            try? idle.send("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
            #expect(!(await idle.read(until: "HTTP/1.1", within: 2)).contains("HTTP/1.1"))
            // A live stream outlives the timeout: an event appended after it still arrives.
            let live = try RawConnection(port: port)
            try live.send("GET /v1/events HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(h.laptop)\r\n\r\n")
            try await Task.sleep(for: .seconds(1))
            try h.ledger.run(.propose(proposal("after-idle")), now: ServerHarness.systemNow())
            let seen = await live.read(until: "after-idle", within: 20)
            #expect(seen.contains("after-idle"), "\(seen)")
        }
    }
}

/// A plain TCP connection to the loopback server, for what an HTTP client library hides.
final class RawConnection {
    let fd: Int32

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else { throw LedgerError(.invalidInput, "connect: errno \(errno)") }
        // Reads wake every 100 ms so a deadline is kept.
        var tv = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        guard Glibc.send(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count else {
            throw LedgerError(.invalidInput, "send: errno \(errno)")
        }
    }

    /// What was read once `marker` appears, or when the connection closes or `seconds` pass.
    /// The blocking reads run on a Dispatch thread: the server's handlers share the
    /// concurrency pool this test runs on (two threads on two cores).
    func read(until marker: String, within seconds: Double) async -> String {
        await read(marker, seconds).text
    }

    /// Everything read until the server closes its side; nil if it has not within `seconds`.
    func readUntilClosed(within seconds: Double) async -> String? {
        let r = await read(nil, seconds)
        return r.closed ? r.text : nil
    }

    private func read(_ marker: String?, _ seconds: Double) async -> (text: String, closed: Bool) {
        let fd = fd
        return await withCheckedContinuation { done in
            DispatchQueue.global().async { done.resume(returning: Self.read(fd, until: marker, within: seconds)) }
        }
    }

    private static func read(_ fd: Int32, until marker: String?, within seconds: Double) -> (text: String, closed: Bool) {
        var out: [UInt8] = []
        let deadline = Date().addingTimeInterval(seconds)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while Date() < deadline {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n == 0 { return (String(decoding: out, as: UTF8.self), true) }
            if n > 0 {
                out += buffer[0..<n]
                if let marker, String(decoding: out, as: UTF8.self).contains(marker) { break }
            }
        }
        return (String(decoding: out, as: UTF8.self), false)
    }
}
