import Hummingbird
import HummingbirdCore
import Logging
import NIOCore

/// Hummingbird's HTTP/1.1 child channel behind an ``AcceptGate``: an
/// accepted connection the gate refuses is closed before it has a pipeline
/// (and counted in `vsearch_connections_closed_total` by its reason);
/// the others are set up exactly as `HTTP1Channel` does and counted by the
/// gate until they close — or until the gate closes one that is idle to make
/// room for a newcomer (`idle_evicted`).
struct GatedHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value

    /// Why a connection's setup ended early; NIO drops the channel, which is already closed.
    struct RefusedAtAccept: Error {
        let reason: AcceptGate.Refusal
    }

    let http: HTTP1Channel
    let gate: AcceptGate
    let metrics: ServerMetrics?

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let address = channel.remoteAddress?.ipAddress ?? "unknown"
        let id = ObjectIdentifier(channel), metrics = self.metrics
        let admission = gate.admit(id, from: address) { [weak channel] in
            metrics?.recordConnectionClosed(reason: "idle_evicted")
            channel?.close(promise: nil)
        }
        if case .refused(let refusal) = admission {
            metrics?.recordConnectionClosed(reason: refusal.rawValue)
            channel.close(promise: nil)
            return channel.eventLoop.makeFailedFuture(RefusedAtAccept(reason: refusal))
        }
        let gate = self.gate
        channel.closeFuture.whenComplete { _ in gate.closed(id) }
        // NIO neither closes nor registers a channel whose setup failed: close it here, or its socket would stay open.
        return http.setup(channel: channel, logger: logger).flatMapErrorThrowing { error in
            channel.close(promise: nil)
            throw error
        }
    }

    func handle(value: Value, logger: Logger) async {
        await http.handle(value: value, logger: logger)
    }
}
