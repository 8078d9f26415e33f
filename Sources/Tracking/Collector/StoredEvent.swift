/// An event as a collector stored it, with its place in the store's order:
/// what ``CollectorStore/storedEvents(after:limit:)`` pages through to copy a
/// collector (`vsearch catalog migrate`).
public struct StoredEvent: Sendable, Hashable {
    /// The event's position in its store; pass the last one seen to read the next page.
    public var cursor: Int64
    /// The event as received, with its id (given or derived from its content).
    public var event: TrackingEvent

    public init(cursor: Int64, event: TrackingEvent) {
        self.cursor = cursor
        self.event = event
    }
}
