import Tracking
/// What became of one event sent.
public enum DeliveryResult: Sendable, Hashable {
    /// The receiving side has it (or already had it).
    case accepted
    /// The receiving side refuses it for good (invalid, 4xx); it is dropped.
    case rejected(reason: String)
    /// Not delivered this time (connection failure, 408, 429, 5xx); try again,
    /// after `retryAfter` seconds when the server said so.
    case retry(reason: String, retryAfter: Double?)
}

/// What a transport says about a batch.
public enum BatchOutcome: Sendable, Hashable {
    /// One result per event, in order.
    case results([DeliveryResult])
    /// The whole batch was refused with no per-event detail (HTTP 400, 413,
    /// 422…): the tracker splits it to find the bad event(s).
    case batchRejected(reason: String)
}

/// Sends batches of events somewhere: the hosted analytics endpoint, the
/// local collector, or a test's script.
public protocol EventTransport: Sendable {
    /// Sends `events` (already validated and filled) and reports on each.
    func send(_ events: [TrackingEvent], uid: String?) async -> BatchOutcome
}
