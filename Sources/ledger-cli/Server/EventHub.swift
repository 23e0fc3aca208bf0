import ActionLedger
import Foundation
import ServiceLifecycle

/// Tails the log and fans new events out to every open stream.
///
/// One task polls the head with a read transaction (a few microseconds) every
/// `pollInterval`: events appended by this server and by any other process on the same
/// store (the CLI) reach the streams alike, within one interval. Each event is read and
/// decoded once, however many streams are open. A `device.revoked`, `token.revoked`, a
/// `device.key_rotated` (for the device's sessions) or a signed-out session closes the
/// streams of what it ends.
final class EventHub: Service, Sendable {
    enum Message: Sendable {
        /// New events with their SSE text, rendered once for every stream.
        case events([(seq: UInt64, sse: String)])
        case heartbeat
    }

    private struct Subscriber {
        let identity: Identity
        let continuation: AsyncStream<Message>.Continuation
        let backlog: Backlog
    }

    /// The bytes a stream has been handed and not yet written: a stream that stops reading
    /// (a client that never drains its socket) would otherwise make the hub keep every event
    /// for it. Past ``maxBacklog`` the stream is closed instead, and its client resumes from
    /// the log with `Last-Event-ID`, read in batches as any catch-up is.
    final class Backlog: Sendable {
        private let bytes = Locked(0)

        /// Counts `n` more bytes handed over; false (counting nothing) past `limit` — unless
        /// nothing is pending: a stream that has written all it was handed is reading, and
        /// gets the next batch however large (one commit of many big proposals), while one
        /// that stopped reading is closed at the batch after.
        func add(_ n: Int, limit: Int) -> Bool {
            bytes.withLock { b in
                guard b == 0 || b + n <= limit else { return false }
                b += n
                return true
            }
        }

        /// The stream wrote `n` of them.
        func written(_ n: Int) { bytes.withLock { $0 -= n } }
    }

    /// Most bytes a stream may have pending before it is closed (see ``Backlog``).
    static let maxBacklog = 1 << 20
    /// What a heartbeat counts in a backlog.
    static let heartbeatBytes = 16

    private struct State {
        var seq: UInt64 = 0
        var subscribers: [UInt64: Subscriber] = [:]
        var nextId: UInt64 = 0
        /// Open streams per device, for `connected` in `GET /v1/devices`.
        var openByDevice: [String: Int] = [:]
        var stopped = false
    }

    let ledger: Ledger
    let agents: AgentCache
    let pollInterval: Duration
    let heartbeat: Duration
    private let state = Locked(State())

    init(ledger: Ledger, pollInterval: Duration, heartbeat: Duration) throws {
        self.ledger = ledger
        agents = AgentCache(ledger: ledger)
        self.pollInterval = pollInterval
        self.heartbeat = heartbeat
        let head = try ledger.read { try $0.head().seq }
        state.withLock { $0.seq = head }
    }

    /// Opens a subscription: every event appended after the hub's current position, until
    /// the stream is cancelled, its identity revoked, or the server stops.
    func subscribe(_ identity: Identity) -> (id: UInt64, stream: AsyncStream<Message>, backlog: Backlog) {
        let (stream, continuation) = AsyncStream<Message>.makeStream()
        let backlog = Backlog()
        let id: UInt64? = state.withLock { s in
            guard !s.stopped else { return nil }
            s.nextId += 1
            s.subscribers[s.nextId] = Subscriber(identity: identity, continuation: continuation, backlog: backlog)
            if let d = identity.device { s.openByDevice[d, default: 0] += 1 }
            return s.nextId
        }
        guard let id else {
            continuation.finish()
            return (0, stream, backlog)
        }
        continuation.onTermination = { [weak self] _ in self?.remove(id) }
        return (id, stream, backlog)
    }

    /// Ends one subscription (its stream's response then finishes).
    func end(_ id: UInt64) {
        state.withLock { $0.subscribers[id]?.continuation }?.finish()
    }

    private func remove(_ id: UInt64) {
        state.withLock { s in
            guard let sub = s.subscribers.removeValue(forKey: id), let d = sub.identity.device else { return }
            s.openByDevice[d, default: 1] -= 1
            if s.openByDevice[d] == 0 { s.openByDevice[d] = nil }
        }
    }

    /// Whether `device` has a stream open now.
    func isConnected(_ device: String) -> Bool { state.withLock { $0.openByDevice[device] != nil } }

    var openStreams: Int { state.withLock { $0.subscribers.count } }

    /// Closes the streams `matching` selects (a session signed out through the API).
    func close(where matching: @Sendable (Identity) -> Bool) {
        let closing = state.withLock { s in s.subscribers.values.filter { matching($0.identity) }.map(\.continuation) }
        for c in closing { c.finish() }
    }

    func run() async throws {
        await cancelWhenGracefulShutdown {
            var sinceHeartbeat = Duration.zero
            while !Task.isCancelled {
                do {
                    try self.poll()
                } catch {
                    // A failed read is retried next interval; streams stay open.
                }
                sinceHeartbeat += self.pollInterval
                if sinceHeartbeat >= self.heartbeat {
                    sinceHeartbeat = .zero
                    self.broadcast(.heartbeat)
                }
                try? await Task.sleep(for: self.pollInterval)
            }
        }
        let open = state.withLock { s in
            s.stopped = true
            return s.subscribers.values.map(\.continuation)
        }
        for c in open { c.finish() }
    }

    static let maxBatch = 4096

    /// Reads what was appended since the last poll (up to ``maxBatch`` events) and delivers it.
    func poll() throws {
        let from = state.withLock { $0.seq } + 1
        let events: [StoredEvent] = try ledger.read { reader in
            let head = try reader.head().seq
            guard head >= from else { return [] }
            var out: [StoredEvent] = []
            // A bounded batch per poll: a large import by the CLI streams out over several polls
            // instead of being decoded into memory at once.
            try reader.forEach(from: from) { stored in
                out.append(stored)
                return stored.event.seq < head && out.count < Self.maxBatch
            }
            return out
        }
        guard let last = events.last else { return }
        let subscribers = state.withLock { s in
            s.seq = last.event.seq
            return Array(s.subscribers.values)
        }
        guard !subscribers.isEmpty else { return }
        let rendered = events.map { (seq: $0.event.seq, sse: LedgerServer.sse($0)) }
        for sub in subscribers {
            // A revoked device or token gets its revocation and nothing after it, even when
            // later events came in the same batch.
            let end = events.firstIndex { StreamFilter.revokes($0.event, sub.identity) }
            let visible = zip(events[..<((end ?? events.count - 1) + 1)], rendered)
                .filter { StreamFilter.visible($0.0.event, to: sub.identity, agents: agents) }.map(\.1)
            if !visible.isEmpty {
                guard sub.backlog.add(Self.bytes(visible), limit: Self.maxBacklog) else {
                    sub.continuation.finish()  // too far behind: it resumes from the log
                    continue
                }
                sub.continuation.yield(.events(visible))
            }
            if end != nil { sub.continuation.finish() }
        }
    }

    private func broadcast(_ message: Message) {
        for sub in state.withLock({ Array($0.subscribers.values) }) {
            guard sub.backlog.add(Self.heartbeatBytes, limit: Self.maxBacklog) else {
                sub.continuation.finish()
                continue
            }
            sub.continuation.yield(message)
        }
    }

    /// What a batch of rendered events counts in a backlog.
    static func bytes(_ events: [(seq: UInt64, sse: String)]) -> Int { events.reduce(0) { $0 + $1.sse.utf8.count } }
}

/// What a token may see of the log, and which events end its streams.
enum StreamFilter {
    /// Devices see their person's events; specialists their own proposals' events;
    /// auditors all of their org's. Token events only reach auditors.
    static func visible(_ e: Event, to identity: Identity, agents: AgentCache) -> Bool {
        guard e.org == identity.org else { return false }
        if e.type == .tokenIssued || e.type == .tokenRevoked { return identity.scope == .auditor }
        switch identity.scope {
        case .auditor: return true
        case .device: return e.person == identity.person
        case .specialist: return e.actionId.map { agents.agent(of: $0, proposal: e) == identity.subject } ?? false
        }
    }

    static func revokes(_ e: Event, _ identity: Identity) -> Bool {
        switch e.payload {
        case .deviceRevoked(let d): identity.device == d.device
        // A session is bound to the key that signed it in (SessionStore.Session.keySeq): a
        // rotation after that key's term began ends it, an earlier one (the rotation that put
        // its key in force, or one before) does not. A token names no key and outlives a
        // rotation, as it outlives the key it never used.
        case .deviceKeyRotated(let k): identity.device == k.device && identity.id.hasPrefix("ses-") && e.seq > (identity.keySeq ?? 0)
        case .tokenRevoked(let t): identity.id == t.tokenId
        default: false
        }
    }
}

/// The agent that proposed each action, learnt from `action.proposed` as it streams by and
/// read from the log for older actions: a specialist's stream shows its own actions only.
final class AgentCache: Sendable {
    private let ledger: Ledger
    private let known = Locked([String: String]())

    init(ledger: Ledger) { self.ledger = ledger }

    func agent(of actionId: String, proposal e: Event) -> String? {
        if case .proposed(let p) = e.payload { return p.specialist.agent }
        if let a = known.withLock({ $0[actionId] }) { return a }
        guard let a = try? ledger.read({ try $0.actionState(actionId)?.proposal.specialist.agent }) else { return nil }
        known.withLock { $0[actionId] = a }
        return a
    }
}
