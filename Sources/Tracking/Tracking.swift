/// Analytics events: validation, durable queue, batching and delivery.
///
/// This module is laid down with the package; the event model, the durable
/// queue and the tracker arrive with the tracking issue.
public enum Tracking {
    /// The analytics wire protocol version the tracker speaks (ViSenze Analytics v3).
    public static let protocolVersion = "v3"
}
