import Foundation
import HTTPTypes
import NIOCore
import NIOHTTPTypes
import VisualSearch

/// A channel handler on every connection, after HTTP decoding, enforcing
/// ``ConnectionLimits``:
///
/// - a connection the ``AcceptGate`` admitted over a limit (its ``AcceptGate/Verdict``:
///   beyond ``ConnectionLimits/maxConnections``, or beyond
///   ``ConnectionLimits/maxConnectionsPerClient`` from its address or
///   ``ConnectionLimits/maxConnectionsPerPrefix`` from its network) gets an
///   answer of its own when its request's head arrives — 503 (or 429, held
///   for ``ClientLimits/refusalDelay`` outside the connection table while
///   fewer than half the table's size are held) with `Retry-After: 1` and
///   `Connection: close`, in the API family's error JSON — and is closed;
///   its request never reaches the routes. The one exception: beyond the
///   connection limit (and in the health reserve), `GET /health` is answered
///   as usual, and the connection closed after it;
/// - it tells the gate when a request starts and when its answer is written,
///   so the gate knows which connections are idle (and may close them under pressure);
/// - a request whose headers do not arrive within ``ConnectionLimits/headerTimeout``,
///   or whose body falls behind ``ConnectionLimits/bodyTimeout`` plus one
///   second per ``ConnectionLimits/minBodyRate`` bytes, is closed. Closing is
///   the answer: a client that sends this slowly is not waiting for one (nginx does the same).
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
        /// Over a connection limit since this instant: its request gets this refusal and the connection closes.
        case refusing(ServerError, since: NIODeadline)
    }

    let limits: ConnectionLimits
    let counter: ConnectionCounter
    /// The gate that admitted the connection: its verdict, and told when the connection is idle.
    let gate: AcceptGate
    /// The connection, as the gate knows it.
    var connection: ObjectIdentifier?
    /// Whether a `GET /health` is answered although the connection is refused (over the connection limit, or in the reserve).
    var answersHealth = false
    /// Whether the connection closes once its answer is written (a `/health` answered over the limit).
    var closesAfterAnswer = false
    /// Whether the answer was written before the request's body ended (a refusal from the head): the request is over at its end.
    var answeredEarly = false
    let metrics: ServerMetrics?
    /// Whether connections are limited by peer address (not behind a proxy).
    let limitsPerAddress: Bool
    var phase: Phase = .awaitingHead(since: .now())
    var check: Scheduled<Void>?
    /// The peer address counted, once counted.
    var counted: String?
    /// Whether this connection is one of the held refusals (``ConnectionCounter/hold(from:limit:)``).
    var held = false
    /// How often the deadlines are checked.
    static let checkInterval: TimeAmount = .milliseconds(250)

    /// Seconds a refusal over the per-address limit is held before it is written (``ClientLimits/refusalDelay``).
    let refusalDelay: Double

    init(limits: ConnectionLimits, counter: ConnectionCounter, gate: AcceptGate, metrics: ServerMetrics?, limitsPerAddress: Bool,
         refusalDelay: Double) {
        self.gate = gate
        self.refusalDelay = refusalDelay
        self.limits = limits
        self.counter = counter
        self.metrics = metrics
        self.limitsPerAddress = limitsPerAddress
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let address = context.channel.remoteAddress?.ipAddress ?? "unknown"
        counted = address
        let open = counter.open(from: address)
        metrics?.set("vsearch_connections_open", open.total)
        phase = .awaitingHead(since: .now())
        let id = ObjectIdentifier(context.channel)
        connection = id
        switch gate.verdict(of: id) ?? .serve {
        case .serve:
            break
        case .overConnectionLimit, .healthOnly:
            // Counted in the metrics when refused: a /health asked on it is answered.
            answersHealth = true
            phase = .refusing(.busy(reason: "more than \(limits.maxConnections) connections open", retryAfter: 1), since: .now())
        case .overPrefixLimit:
            metrics?.recordConnectionClosed(reason: "prefix_connection_limit")
            phase = .refusing(.rateLimited(reason: "more than \(limits.maxConnectionsPerPrefix) connections open from this network "
                                           + "(\(AddressPrefix(address)))", retryAfter: 1), since: .now())
        case .overClientLimit:
            metrics?.recordConnectionClosed(reason: "client_connection_limit")
            phase = .refusing(.rateLimited(reason: "more than \(limits.maxConnectionsPerClient) connections open from this address", retryAfter: 1),
                              since: .now())
            // Held for the refusal delay (a flood then gets one answer a second per connection), but outside the
            // table — and only up to half of it: beyond, answered at once.
            if refusalDelay > 0 && counter.hold(from: address, limit: max(1, limits.maxConnections / 2)) {
                held = true
                counted = nil
            }
        }
        scheduleCheck(context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        check?.cancel()
        check = nil
        if let address = counted {
            counted = nil
            metrics?.set("vsearch_connections_open", counter.close(from: address))
        }
        if held {
            held = false
            counter.release()
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        check?.cancel()
        check = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .refusing(let error, _) = phase {
            if case .head(let head) = unwrapInboundIn(data) {
                if answersHealth && Self.isHealthCheck(head) {
                    // Answered as usual, then the connection closes: it was never one of the table's.
                    closesAfterAnswer = true
                    phase = .readingBody(since: .now(), bytes: 0)
                    if let connection { gate.requestStarted(connection) }
                    context.fireChannelRead(data)
                    return
                }
                if answersHealth { metrics?.recordConnectionClosed(reason: "connection_limit") }
                if held {
                    context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(Int64(refusalDelay * 1000))) { [self] in
                        if context.channel.isActive { refuse(context, head: head, error: error) }
                    }
                } else {
                    refuse(context, head: head, error: error)
                }
            }
            return  // nothing of a refused connection reaches the routes
        }
        switch unwrapInboundIn(data) {
        case .head:
            phase = .readingBody(since: .now(), bytes: 0)
            if let connection { gate.requestStarted(connection) }
        case .body(let buffer):
            if case .readingBody(let since, let bytes) = phase { phase = .readingBody(since: since, bytes: bytes + buffer.readableBytes) }
        case .end:
            if answeredEarly {
                answeredEarly = false
                becameIdle()
            } else {
                phase = .answering
            }
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var response) where closesAfterAnswer:
            response.headerFields[.connection] = "close"
            context.write(wrapOutboundOut(.head(response)), promise: promise)
        case .end where closesAfterAnswer:
            closesAfterAnswer = false
            let written = context.writeAndFlush(data)
            written.cascade(to: promise)
            written.assumeIsolated().whenComplete { [self] _ in close(context, reason: nil) }
        case .end:
            switch phase {
            case .answering: becameIdle()
            case .readingBody: answeredEarly = true
            default: break
            }
            context.write(data, promise: promise)
        default:
            context.write(data, promise: promise)
        }
    }

    /// The request is over, its answer written: the connection waits for the next one, idle.
    func becameIdle() {
        phase = .awaitingHead(since: .now())
        if let connection { gate.requestEnded(connection) }
    }

    /// Whether `head` asks `GET /health` (or `HEAD`), the one request answered beyond the connection limit.
    static func isHealthCheck(_ head: HTTPRequest) -> Bool {
        guard head.method == .get || head.method == .head, let path = head.path else { return false }
        return path.prefix { $0 != "?" } == "/health"
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
        case .refusing(_, let since):
            // A refused connection that never sends its head is closed like any other.
            return now - since > .nanoseconds(Int64(limits.headerTimeout * 1e9)) ? "header_timeout" : nil
        }
    }

    /// Answers a connection over a limit and closes it once the answer is written.
    func refuse(_ context: ChannelHandlerContext, head: HTTPRequest, error: ServerError) {
        let path = head.path.map { String($0.prefix { $0 != "?" }) } ?? "/"
        let body = Responses.failureBody(family: RoutePath.family(of: path), method: RoutePath.method(of: path), error: error,
                                         requestID: RequestID.make())
        var fields: HTTPFields = [.contentType: "application/json; charset=utf-8", .connection: "close",
                                  .contentLength: String(body.count), .xContentTypeOptions: "nosniff", .cacheControl: "no-store"]
        if let seconds = error.retryAfter { fields[.retryAfter] = String(seconds) }
        context.write(wrapOutboundOut(.head(HTTPResponse(status: error.status, headerFields: fields))), promise: nil)
        context.write(wrapOutboundOut(.body(context.channel.allocator.buffer(bytes: body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { [self] _ in
            close(context, reason: nil)
        }
    }

    func close(_ context: ChannelHandlerContext, reason: String?) {
        if let reason { metrics?.recordConnectionClosed(reason: reason) }
        check?.cancel()
        check = nil
        context.close(promise: nil)
    }
}
