import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1

/// Whether a connection stays open after an answer, as HTTP/1.1 says
/// (RFC 9112 §9.3): an HTTP/1.0 request without `Connection: keep-alive`, or
/// any request with `Connection: close`, gets `Connection: close` and the
/// connection is closed once the answer is written; an HTTP/1.0 client is
/// answered in HTTP/1.0 (so it is never sent a chunked body it cannot read).
/// An answer that says `Connection: close` itself (admission's 408 for a
/// body that stalled) closes the connection too.
///
/// It has to see the request's version, which the version-free HTTP types
/// after `HTTP1ToHTTPServerCodec` no longer carry: ``installer()`` is the
/// handler to list among Hummingbird's `additionalChannelHandlers`; it places
/// this one in front of that codec. (Before, such a request was answered as
/// HTTP/1.1 without `Connection: close` and held until the header timeout.)
final class ConnectionPersistence: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// The requests read and not yet answered, oldest first (HTTP/1.1 pipelining answers in order).
    var pending: [(version: HTTPVersion, keepAlive: Bool)] = []
    /// Whether the answer being written ends the connection.
    var closesAfterAnswer = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data) { pending.append((head.version, head.isKeepAlive)) }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head):
            guard let request = pending.first else { return context.write(data, promise: promise) }
            let http10 = request.version.major == 1 && request.version.minor == 0
            closesAfterAnswer = !request.keepAlive || (http10 && !head.headers.contains(name: "content-length"))
                || head.headers[canonicalForm: "connection"].contains { $0.lowercased() == "close" }
            if http10 { head.version = .http1_0 }
            if closesAfterAnswer {
                head.headers.replaceOrAdd(name: "connection", value: "close")
            } else if http10 {
                head.headers.replaceOrAdd(name: "connection", value: "keep-alive")
            }
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .body:
            context.write(data, promise: promise)
        case .end:
            if !pending.isEmpty { pending.removeFirst() }
            guard closesAfterAnswer else { return context.write(data, promise: promise) }
            closesAfterAnswer = false
            let written = context.eventLoop.makePromise(of: Void.self)
            if let promise { written.futureResult.cascade(to: promise) }
            context.writeAndFlush(data, promise: written)
            written.futureResult.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        }
    }

    /// A handler for Hummingbird's `additionalChannelHandlers` (which come
    /// after the HTTP/1 codec) that puts a ``ConnectionPersistence`` in front
    /// of the codec when it joins a pipeline, and then passes everything on.
    static func installer() -> any RemovableChannelHandler { Installer() }

    final class Installer: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = NIOAny

        func handlerAdded(context: ChannelHandlerContext) {
            let pipeline = context.pipeline.syncOperations
            guard let codec = try? pipeline.handler(type: HTTP1ToHTTPServerCodec.self) else { return }
            try? pipeline.addHandler(ConnectionPersistence(), position: .before(codec))
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            context.fireChannelRead(data)
        }
    }
}
