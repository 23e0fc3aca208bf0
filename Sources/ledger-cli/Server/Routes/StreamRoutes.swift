import ActionLedger
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle

/// `GET /v1/events` (Server-Sent Events, or JSON Lines catch-up) and stream tickets.
extension LedgerServer {
    /// Events read per catch-up transaction: a long catch-up never holds one snapshot long.
    static let catchUpChunk = 512
    /// Most bytes of rendered events a catch-up reads before writing them (proposals reach 64 KiB each).
    static let catchUpBytes = 256 << 10

    func addStreamRoutes(_ router: Router<APIContext>) {
        router.post("/v1/streams/tickets") { _, context in
            let who = try context.require(.device, .specialist, .auditor)
            let ticket = "ast_" + LedgerServer.randomHex(24)
            let expires = try self.now().adding(milliseconds: 60_000)
            self.tickets.withLock { t in
                t = t.filter { $0.value.expiresAt > expires.adding(milliseconds: -60_000) }
                t[ticket] = (who, expires)
            }
            return LedgerServer.json(["ticket": .string(ticket), "expires_at": .string(expires.iso8601)], status: .created)
        }
        router.getAndHead("/v1/events") { request, context in
            let q = Query(request: request)
            var who = context.identity
            if who == nil, let ticket = q.string("ticket") {
                let now = try self.now()
                // Single use: taken out of the table whether or not it is still valid — by a GET;
                // a HEAD opens no stream, so it only looks (HEAD has no side effects).
                let head = context.isHead
                guard let entry = self.tickets.withLock({ head ? $0[ticket] : $0.removeValue(forKey: ticket) }), now < entry.expiresAt,
                      try self.authenticator.isLive(entry.identity, at: now) else {
                    try self.addressLimit.charge(request, context)  // guessing tickets is a call without a token
                    throw Problem.unauthorized("the stream ticket is unknown, used or expired")
                }
                // The identity behind it must still be live (a device revoked since is refused).
                who = entry.identity
                if let device = entry.identity.device { try self.ledger.read({ try $0.deviceState(device) })?.requireLive() }
            }
            guard let who else { throw Problem.unauthorized("a bearer token or a stream ticket (?ticket=) is required") }
            let head = try self.ledger.read { try $0.head().seq }
            var from: UInt64?
            if let last = request.headers[.lastEventID] {
                // Digits only (openapi's pattern; `UInt64` alone takes "+5"), and bounded as `from` is.
                let text = last.trimmingCharacters(in: .whitespaces)
                guard !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let n = UInt64(text), n < UInt64(Query.maxSeq) else {
                    throw Problem.invalid("Last-Event-ID: expected a seq below \(Query.maxSeq)", field: "Last-Event-ID")
                }
                from = n + 1
            } else if q.string("from") != nil {
                from = UInt64(try q.int("from", default: 1, in: 1...Query.maxSeq))
            }
            // A cursor past the log was never one of its events (a forged cursor, or a store
            // restored from an older copy): refused, so the client learns it, instead of a
            // stream that stays silent until the log reaches that seq.
            if let from, from > head + 1 {
                throw Problem.invalid("the log ends at seq \(head): a stream can start at \(head + 1) at the latest, not \(from)",
                                      field: request.headers[.lastEventID] != nil ? "Last-Event-ID" : "from")
            }
            if request.headers[.accept]?.contains("application/x-ndjson") == true {
                if context.isHead {
                    return Response(status: .ok, headers: [.contentType: "application/x-ndjson", .cacheControl: "no-store"],
                                    body: ResponseBody { _ in })
                }
                return self.catchUp(who, from: from ?? 1, to: head)
            }
            return try await self.eventStream(who, from: from ?? head + 1, headOnly: context.isHead)
        }
    }

    /// The events from `from` to `to` the caller may see, as JSON Lines; the response ends there.
    private func catchUp(_ who: Identity, from: UInt64, to head: UInt64) -> Response {
        let ledger = ledger, agents = hub.agents, logger = logger
        return Response(status: .ok, headers: [.contentType: "application/x-ndjson", .cacheControl: "no-store"],
                        body: ResponseBody { writer in
                            var next = from
                            while next <= head {
                                let (lines, last, revoked, failure) = try Self.read(ledger, who, agents, from: next, to: head) {
                                    $0.json.serialized() + "\n"
                                }
                                if !lines.isEmpty { try await writer.write(ByteBuffer(string: lines)) }
                                if let failure { throw Self.cut(failure, logger) }
                                if revoked { break }
                                next = last + 1
                            }
                            try await writer.finish(nil)
                        })
    }

    /// Server-Sent Events: the catch-up from `from`, then every new event as the hub tails
    /// the log, heartbeats between; ends when the identity is revoked or the server stops.
    private func eventStream(_ who: Identity, from: UInt64, headOnly: Bool) async throws -> Response {
        let headers: HTTPFields = [.contentType: "text/event-stream", .cacheControl: "no-store", .init("X-Accel-Buffering")!: "no"]
        // A HEAD gets the headers only: no subscription (its body would never drain one).
        // Its body is one of unknown length, as GET's is, so the headers are GET's (no
        // `Content-Length: 0`, which would describe a stream that ends at once).
        if headOnly { return Response(status: .ok, headers: headers, body: ResponseBody { _ in }) }
        // Subscribed before the catch-up is read: nothing appended in between is missed
        // (what both deliver is sent once, by seq). Connected once the headers go out.
        let live = hub.subscribe(who)
        if let device = who.device {
            let sessions = sessions, now = try now()
            try await Blocking.run { try sessions.markConnected(device: device, at: now) }
        }
        let ledger = ledger, hub = hub, agents = hub.agents, authenticator = authenticator, clock = configuration.clock,
            logger = logger
        return Response(status: .ok, headers: headers,
                        body: ResponseBody { writer in
                            try await writer.write(ByteBuffer(string: "retry: 2000\n: connected\n\n"))
                            var last = from - 1
                            let head = try ledger.read { try $0.head().seq }
                            while last < head {
                                let (events, upTo, revoked, failure) = try Self.read(ledger, who, agents, from: last + 1, to: head,
                                                                                     render: Self.sse)
                                if !events.isEmpty { try await writer.write(ByteBuffer(string: events)) }
                                if let failure {
                                    // An EventSource reconnects after a cut and would meet the damage again
                                    // every 2 s: it is told why first, in an event it can close on, and to wait longer.
                                    try? await writer.write(ByteBuffer(string: Self.sseFailure(failure)))
                                    throw Self.cut(failure, logger)
                                }
                                if revoked {
                                    hub.end(live.id)
                                    try await writer.finish(nil)
                                    return
                                }
                                last = upTo
                            }
                            // The server shuts down before the hub (services stop in reverse order), and
                            // it waits for open responses: so each stream ends itself on graceful shutdown.
                            try await withGracefulShutdownHandler {
                                for await message in live.stream {
                                    switch message {
                                    case .events(let events):
                                        defer { live.backlog.written(EventHub.bytes(events)) }
                                        let fresh = events.filter { $0.seq > last }
                                        guard let newest = fresh.last else { continue }
                                        try await writer.write(ByteBuffer(string: fresh.map(\.sse).joined()))
                                        last = newest.seq
                                    case .heartbeat:
                                        // An identity that expired (or was signed out) since: the stream ends here.
                                        guard try authenticator.isLive(who, at: try clock()) else {
                                            hub.end(live.id)
                                            break
                                        }
                                        try await writer.write(ByteBuffer(string: ": heartbeat\n\n"))
                                        live.backlog.written(EventHub.heartbeatBytes)
                                    }
                                }
                            } onGracefulShutdown: {
                                hub.end(live.id)
                            }
                            try await writer.finish(nil)
                        })
    }

    /// One SSE message: `id:` the seq, `data:` the event's JSON (one line).
    static func sse(_ e: StoredEvent) -> String {
        "id: \(e.event.seq)\ndata: \(e.event.json().serialized())\n\n"
    }

    /// The events from `from` (not past `to`) the caller may see, rendered, up to
    /// ``catchUpChunk`` events or ``catchUpBytes`` bytes; the last seq examined; and whether
    /// the read stopped at an event that revokes the caller (a revoked device or token sees
    /// its revocation and nothing after it). A client that stops reading holds the server to
    /// one such chunk: the write waits for the socket, and the next chunk is read only after it.
    static func read(_ ledger: Ledger, _ who: Identity, _ agents: AgentCache, from: UInt64, to: UInt64,
                     render: (StoredEvent) -> String) throws -> (String, UInt64, revoked: Bool, failure: LedgerError?) {
        var out = "", last = from - 1, revoked = false, failure: LedgerError?
        try ledger.read { reader in
            do {
                try reader.forEach(from: from) { stored in
                    guard stored.event.seq <= to else { return false }
                    last = stored.event.seq
                    if StreamFilter.visible(stored.event, to: who, agents: agents) { out += render(stored) }
                    revoked = StreamFilter.revokes(stored.event, who)
                    return !revoked && last - from + 1 < UInt64(catchUpChunk) && out.utf8.count < catchUpBytes
                }
            } catch {
                // Damage at a seq, or a page LMDB finds damaged: the events before it are still
                // sent, then the stream is cut (after telling the client why, as an answer would).
                guard let e = ProblemMiddleware<APIContext>.clientError(error, store: ledger.environment.path) else { throw error }
                failure = e
            }
        }
        // An empty log past `from`: nothing more to read.
        return (out, max(last, last == from - 1 && failure == nil ? to : last), revoked, failure)
    }

    /// Ends a stream that met damage in the log: said in the server's log (the client sees
    /// its connection cut, not an end that reads as complete).
    static func cut(_ failure: LedgerError, _ logger: Logger) -> LedgerError {
        logger.error("a stream stopped at damage in the log: \(failure.message) [\(failure.code.rawValue)]")
        return failure
    }

    /// The SSE event sent before a cut at damage: `ledger_error` (not `error`, which an
    /// EventSource also fires for a lost connection), the error as every answer gives it, and
    /// a reconnect delay of a minute instead of 2 s.
    static func sseFailure(_ failure: LedgerError) -> String {
        "retry: 60000\nevent: ledger_error\ndata: \(failure.json.serialized())\n\n"
    }
}
