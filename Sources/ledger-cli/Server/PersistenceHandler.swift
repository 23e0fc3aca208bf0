import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1

/// Keeps each answer's framing and the connection's life to what its request's HTTP
/// version and `Connection` header asked (RFC 9112 §6.1, §9.3).
///
/// Hummingbird's connection loop stops only on a request whose `Connection` header is
/// exactly `close`, and the HTTP/1 to HTTP types conversion drops the request's version:
/// an HTTP/1.0 client that reads its answer until the server closes (an HTTP/1.0 answer's
/// default) waited for the idle timeout, and one reading a stream got chunked framing, which
/// HTTP/1.0 does not have, mixed into the body. This handler sits before that conversion,
/// where the version is still known:
/// - a request with a `close` token, or HTTP/1.0 without `keep-alive`, is passed on with
///   `Connection: close`, the one form the loop reads: it answers, then half-closes;
/// - an answer to HTTP/1.0 goes out as HTTP/1.0; one without a length is delimited by the
///   connection's close (no chunks), so the connection closes after it, keep-alive or not.
final class PersistenceHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// The requests not answered yet, oldest first (HTTP/1.1 pipelines): their version, and
    /// whether they asked to keep the connection.
    private var pending: [(version: HTTPVersion, keep: Bool)] = []
    /// The answer being written is delimited by the close: close once it ends.
    private var closeAfterAnswer = false

    private static func beforeHTTP11(_ v: HTTPVersion) -> Bool { v.major < 1 || (v.major == 1 && v.minor < 1) }

    /// Adds the handler just before the HTTP/1 to HTTP types codec of `pipeline`.
    static func install(in pipeline: ChannelPipeline.SynchronousOperations) throws {
        let codec = try pipeline.handler(type: HTTP1ToHTTPServerCodec.self)
        try pipeline.addHandler(PersistenceHandler(), position: .before(codec))
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data) else { return context.fireChannelRead(data) }
        let tokens = head.headers[canonicalForm: "connection"].map { $0.lowercased() }
        // `close` wins over `keep-alive` (RFC 9112 §9.3), whatever their case.
        let keep = !tokens.contains("close") && (!Self.beforeHTTP11(head.version) || tokens.contains("keep-alive"))
        pending.append((head.version, keep))
        if !keep { head.headers.replaceOrAdd(name: "connection", value: "close") }
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head):
            // An interim answer (100 Continue) answers no request yet.
            guard head.status.code >= 200, !pending.isEmpty else { return context.write(data, promise: promise) }
            var (version, keep) = pending.removeFirst()
            if Self.beforeHTTP11(version) {
                head.version = version
                if !head.headers.contains(name: "content-length") {
                    head.headers.remove(name: "transfer-encoding")
                    closeAfterAnswer = true
                    keep = false
                }
            }
            // Said either way: an HTTP/1.0 client keeps a connection only when the answer says
            // so, and one about to close says so (RFC 9112 §9.6).
            if !keep {
                head.headers.replaceOrAdd(name: "connection", value: "close")
            } else if Self.beforeHTTP11(version) {
                head.headers.replaceOrAdd(name: "connection", value: "keep-alive")
            }
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .end where closeAfterAnswer:
            closeAfterAnswer = false
            let written = promise ?? context.eventLoop.makePromise(), channel = context.channel
            written.futureResult.whenComplete { _ in channel.close(promise: nil) }
            context.writeAndFlush(data, promise: written)
        default:
            context.write(data, promise: promise)
        }
    }
}
