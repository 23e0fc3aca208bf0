import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes
import Synchronization

/// Keeps one client from holding the server's connections: a cap on the connections open
/// from one address (a trusted reverse proxy's excepted: it carries everyone), and a
/// deadline by which a request's body must have arrived in full. Without them one address,
/// with no token, trickling a body a byte a minute, kept connections open for ever, and the
/// process died (libdispatch traps) when they took every file descriptor it may open.
/// The server's total is capped apart (``LedgerServer/Configuration/maxConnections``).
final class ConnectionCounts: Sendable {
    private let open = Mutex<[ClientAddress: Int]>([:])
    /// When a refusal was last logged: at most one line a minute says so.
    private let lastWarned = Mutex<ContinuousClock.Instant?>(nil)
    let perAddress: Int
    let trustedProxies: Set<ClientAddress>
    let metrics: ServerMetrics
    let logger: Logger

    init(perAddress: Int, trustedProxies: Set<ClientAddress>, metrics: ServerMetrics, logger: Logger) {
        self.perAddress = perAddress
        self.trustedProxies = trustedProxies
        self.metrics = metrics
        self.logger = logger
    }

    /// Counted and, once a minute at most, logged: an operator whose clients come through a
    /// proxy not named `--trusted-proxy` sees why they are reset.
    func refused(_ peer: ClientAddress) {
        metrics.connectionsRefused.increment()
        let now = ContinuousClock.now
        let warn = lastWarned.withLock { last in
            guard last.map({ now - $0 >= .seconds(60) }) ?? true else { return false }
            last = now
            return true
        }
        if warn {
            logger.warning("""
                closed a connection from \(peer.bucket): it holds \(perAddress) already (--max-connections-per-address; \
                behind a reverse proxy, name it with --trusted-proxy)
                """)
        }
    }

    /// Counts a new connection from `peer`; false when its address already holds its share
    /// (the connection is then closed, never counted). A trusted proxy is never counted.
    func admit(_ peer: ClientAddress) -> Bool {
        if trustedProxies.contains(peer) { return true }
        let key = peer.bucketAddress
        return open.withLock { o in
            let n = o[key, default: 0]
            guard n < perAddress else { return false }
            o[key] = n + 1
            return true
        }
    }

    func release(_ peer: ClientAddress) {
        if trustedProxies.contains(peer) { return }
        let key = peer.bucketAddress
        open.withLock { o in
            let n = o[key, default: 0]
            o[key] = n > 1 ? n - 1 : nil
        }
    }
}

/// One per connection, after HTTP decoding: admits it against ``ConnectionCounts`` and
/// closes it when a request's body has not arrived in full within `bodyDeadline` of its
/// head (the idle timeout counts any byte as activity, so a trickled body never tripped it).
final class ConnectionGuardHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    private let counts: ConnectionCounts
    private let bodyDeadline: TimeAmount
    private var counted: ClientAddress?
    private var decided = false
    private var deadline: Scheduled<Void>?

    init(counts: ConnectionCounts, bodyDeadline: TimeAmount) {
        self.counts = counts
        self.bodyDeadline = bodyDeadline
    }

    func handlerAdded(context: ChannelHandlerContext) {
        // Added by the server's HTTP/1 set-up, after its codecs: the place to put the
        // handler that must see the request's HTTP version.
        do {
            try PersistenceHandler.install(in: context.pipeline.syncOperations)
        } catch {
            context.close(promise: nil)
            return
        }
        if context.channel.isActive { admit(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        admit(context)
        context.fireChannelActive()
    }

    private func admit(_ context: ChannelHandlerContext) {
        guard !decided else { return }
        decided = true
        guard let peer = context.channel.remoteAddress?.ipAddress.flatMap(ClientAddress.init) else { return }
        if counts.admit(peer) {
            counted = peer
        } else {
            counts.refused(peer)
            context.close(promise: nil)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            deadline?.cancel()
            deadline = context.eventLoop.assumeIsolated().scheduleTask(in: bodyDeadline) {
                context.close(promise: nil)
            }
        case .end:
            deadline?.cancel()
            deadline = nil
        case .body:
            break
        }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        release()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        release()
    }

    private func release() {
        deadline?.cancel()
        deadline = nil
        if let peer = counted {
            counted = nil
            counts.release(peer)
        }
    }
}

@available(*, unavailable)
extension ConnectionGuardHandler: Sendable {}

