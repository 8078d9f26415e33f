/// What a tracker has done with its events, persisted with the queue.
///
/// Every accepted event ends in exactly one of: still ``queued``, ``sent``,
/// or dropped (``droppedRejected`` by the server, ``droppedQueueFull`` when
/// the queue cap pushed it out), so `accepted == queued + sent + dropped`.
public struct TrackingCounters: Sendable, Hashable, Codable {
    /// Events accepted by `track` since the queue was created.
    public var accepted: Int = 0
    /// Events waiting in the queue now.
    public var queued: Int = 0
    /// Events the receiving side confirmed.
    public var sent: Int = 0
    /// Delivery attempts that failed transiently and will be retried (per event).
    public var retried: Int = 0
    /// Events the receiving side rejected permanently (reason logged).
    public var droppedRejected: Int = 0
    /// Oldest events pushed out by the queue cap.
    public var droppedQueueFull: Int = 0

    public init() {}

    enum CodingKeys: String, CodingKey {
        case accepted, queued, sent, retried, droppedRejected = "dropped_rejected", droppedQueueFull = "dropped_queue_full"
    }
}
