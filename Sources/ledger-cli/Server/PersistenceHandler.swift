import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1

/// Closes a connection after the answer to a request that did not ask to keep it:
/// HTTP/1.0 without `Connection: keep-alive`, or any `close` token, in any case
/// (RFC 9112 §9.3).
///
/// Hummingbird's connection loop stops only on a request whose `Connection` header is
/// exactly `close`, and the HTTP/1 to HTTP types conversion drops the request's version, so
/// an HTTP/1.0 client that reads its answer until the server closes (as HTTP/1.0 answers
/// are delimited by default) waited for the idle timeout. This handler sits before that
/// conversion, where the version is still known, and states the client's intent in the
/// one form the loop reads; the loop then answers and half-closes the connection.
final class PersistenceHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    /// Adds the handler just before the HTTP/1 to HTTP types codec of `pipeline`.
    static func install(in pipeline: ChannelPipeline.SynchronousOperations) throws {
        let codec = try pipeline.handler(type: HTTP1ToHTTPServerCodec.self)
        try pipeline.addHandler(PersistenceHandler(), position: .before(codec))
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data), !head.isKeepAlive else {
            return context.fireChannelRead(data)
        }
        head.headers.replaceOrAdd(name: "connection", value: "close")
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }
}
