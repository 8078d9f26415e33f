import Foundation

/// The receiving side of tracking: where a collector (`vsearch serve`'s
/// `/v3/events`) stores events and where `vsearch events stats` reads them.
///
/// Every store keeps the same rule, which the storage conformance suite
/// checks: events are validated one by one (an invalid event is rejected
/// alone), stored at most once per event id (a resent event is accepted and
/// not stored again), and an event without an id gets one from its content
/// (``TrackingEvent/contentID``), so a resent pixel is deduplicated too.
public protocol CollectorStore: Sendable {
    /// Validates and stores events in one transaction; one result per event, in order.
    func receive(_ events: [TrackingEvent]) async throws(TrackingError) -> [CollectorResult]
    /// Events stored (after deduplication).
    func eventCount() async throws(TrackingError) -> Int
    /// Bytes of the events stored: their payloads (each event's JSON as
    /// stored), what a server's cap on stored events is kept against.
    /// Read once when a collector starts taking events (a scan of the table), not per batch.
    func storedEventBytes() async throws(TrackingError) -> Int
    /// Engagement per query and per product, for events at or after `since`.
    func stats(since: Date?, limit: Int) async throws(TrackingError) -> EventStats
    /// Events per action in buckets of `bucketSeconds` (≥ 1), for events at or after `since`.
    func timeline(since: Date?, bucketSeconds: Int) async throws(TrackingError) -> EventTimeline
    /// Stored events in the order they were stored, at most `limit` after
    /// `cursor` (0 for the first page, then the last ``StoredEvent/cursor``
    /// seen): how a collector is copied to another store. An event that came
    /// without a timestamp carries the time it was stored, so a copy counts it
    /// in the same `stats(since:)` windows.
    func storedEvents(after cursor: Int64, limit: Int) async throws(TrackingError) -> [StoredEvent]
}

/// A collector's answer for one event: code 0 accepted (a duplicate too),
/// otherwise rejected with the reason.
public struct CollectorResult: Sendable, Hashable, Codable {
    public var code: Int
    public var message: String

    /// Stored, or already stored.
    public static let accepted = CollectorResult(code: 0, message: "")

    public init(code: Int, message: String) {
        self.code = code
        self.message = message
    }
}

extension TrackingEvent {
    /// The bytes this event takes stored: its JSON (keys sorted), with the
    /// id a store gives it when it came without one — what
    /// ``CollectorStore/storedEventBytes()`` sums.
    public var storedByteCount: Int {
        var event = self
        if event.eventID?.isEmpty ?? true { event.eventID = contentID }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return (try? encoder.encode(event).count) ?? 0
    }

    /// `h-` + a hash of the event's wire parameters: the id of an event that
    /// came without one, so the same event sent twice is stored once.
    public var contentID: String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in EventWireFormat.query(self, code: nil).utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return "h-" + String(hash, radix: 16)
    }
}
