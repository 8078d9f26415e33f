import Foundation
import HTTPTypes
import NIOCore
import NIOHTTPTypes
import Synchronization

/// Connections open now, shared by every connection's guard.
final class ConnectionCounter: Sendable {
    let open = Atomic<Int>(0)
}

/// A channel handler on every connection, after HTTP decoding, enforcing
/// ``ConnectionLimits``: it closes the connection when the server already
/// has ``ConnectionLimits/maxConnections`` open, when a request's headers
/// do not arrive within ``ConnectionLimits/headerTimeout``, and when its
/// body falls behind ``ConnectionLimits/bodyTimeout`` plus one second per
/// ``ConnectionLimits/minBodyRate`` bytes. Closing is the answer: a client
/// that sends this slowly is not waiting for one (nginx does the same).
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    enum Phase {
        /// Waiting for a request's headers since this instant.
        case awaitingHead(since: NIODeadline)
        /// Reading a body that started at this instant; `bytes` so far.
        case readingBody(since: NIODeadline, bytes: Int)
        /// The request is read; the server is answering it.
        case answering
    }

    let limits: ConnectionLimits
    let counter: ConnectionCounter
    let metrics: ServerMetrics?
    var phase: Phase = .awaitingHead(since: .now())
    var check: Scheduled<Void>?
    var counted = false
    /// How often the deadlines are checked.
    static let checkInterval: TimeAmount = .milliseconds(250)

    init(limits: ConnectionLimits, counter: ConnectionCounter, metrics: ServerMetrics?) {
        self.limits = limits
        self.counter = counter
        self.metrics = metrics
    }

    func handlerAdded(context: ChannelHandlerContext) {
        counted = true
        let open = counter.open.wrappingAdd(1, ordering: .relaxed).newValue
        metrics?.set("vsearch_connections_open", open)
        if open > limits.maxConnections {
            close(context, reason: "connection_limit")
            return
        }
        phase = .awaitingHead(since: .now())
        scheduleCheck(context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        check?.cancel()
        check = nil
        if counted {
            counted = false
            let open = counter.open.wrappingSubtract(1, ordering: .relaxed).newValue
            metrics?.set("vsearch_connections_open", open)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        check?.cancel()
        check = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: phase = .readingBody(since: .now(), bytes: 0)
        case .body(let buffer):
            if case .readingBody(let since, let bytes) = phase { phase = .readingBody(since: since, bytes: bytes + buffer.readableBytes) }
        case .end: phase = .answering
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data), case .answering = phase { phase = .awaitingHead(since: .now()) }
        context.write(data, promise: promise)
    }

    func scheduleCheck(_ context: ChannelHandlerContext) {
        let loop = context.eventLoop.assumeIsolated()
        check = loop.scheduleTask(in: Self.checkInterval) { [self] in
            guard context.channel.isActive else { return }
            if let reason = overdue(now: .now()) {
                close(context, reason: reason)
            } else {
                scheduleCheck(context)
            }
        }
    }

    /// Why the connection should be closed now, if it should.
    func overdue(now: NIODeadline) -> String? {
        switch phase {
        case .awaitingHead(let since):
            return now - since > .nanoseconds(Int64(limits.headerTimeout * 1e9)) ? "header_timeout" : nil
        case .readingBody(let since, let bytes):
            let allowed = limits.bodyTimeout + Double(bytes) / Double(max(1, limits.minBodyRate))
            return now - since > .nanoseconds(Int64(min(allowed, 1e9) * 1e9)) ? "body_timeout" : nil
        case .answering:
            return nil
        }
    }

    func close(_ context: ChannelHandlerContext, reason: String) {
        metrics?.recordConnectionClosed(reason: reason)
        check?.cancel()
        check = nil
        context.close(promise: nil)
    }
}
