import Foundation
import ConcurrencyToolkit
import Tracking

/// A ``CollectorStore`` in memory with the collector's rules (each event
/// validated on its own; stored at most once per event id, an event without
/// one identified by its content): the receiving side for delivery tests,
/// so dedup across resends is observable without a database.
final class MemoryCollector: CollectorStore {
    private let events = Observed<[String: TrackingEvent]>([:])

    init() {}

    func receive(_ events: [TrackingEvent]) async throws(TrackingError) -> [CollectorResult] {
        events.map { event in
            do throws(TrackingError) { try EventValidator.validate(event) } catch {
                return CollectorResult(code: 400, message: error.description)
            }
            let id = event.eventID.flatMap { $0.isEmpty ? nil : $0 } ?? event.contentID
            self.events.withLock { stored in
                if stored[id] == nil { stored[id] = event }
            }
            return .accepted
        }
    }

    func eventCount() async throws(TrackingError) -> Int {
        events.read { $0.count }
    }

    /// Each event's JSON, as the database stores measure it.
    func storedEventBytes() async throws(TrackingError) -> Int {
        let all = events.read { Array($0.values) }
        return all.reduce(0) { $0 + ((try? JSONEncoder().encode($1).count) ?? 0) }
    }

    /// Counts per action only; delivery tests need no more.
    func stats(since: Date?, limit: Int) async throws(TrackingError) -> EventStats {
        let actions = events.read { stored in
            Dictionary(stored.values.map { ($0.action.rawValue, 1) }, uniquingKeysWith: +)
        }
        return EventStats(total: actions.values.reduce(0, +), actions: actions, queries: [], products: [])
    }

    /// One bucket per event timestamp bucket; events without a timestamp are left out.
    func timeline(since: Date?, bucketSeconds: Int) async throws(TrackingError) -> EventTimeline {
        let width = Int64(max(1, bucketSeconds)) * 1000
        let rows = events.read { stored in
            stored.values.compactMap { event in event.timestamp.map { (start: $0 / width * width, action: event.action.rawValue, count: 1) } }
        }
        return EventTimeline(bucketSeconds: max(1, bucketSeconds), rows: rows)
    }

    /// In no particular order (a dictionary): delivery tests do not page.
    func storedEvents(after cursor: Int64, limit: Int) async throws(TrackingError) -> [StoredEvent] {
        let all = events.read { Array($0.values) }
        return all.enumerated().dropFirst(Int(cursor)).prefix(limit).map { StoredEvent(cursor: Int64($0.offset + 1), event: $0.element) }
    }

    /// Events stored, for synchronous assertions.
    func count() -> Int { events.read { $0.count } }

    /// Returns true once at least `count` events are stored (woken by each store, never a timer);
    /// false when the waiting task is cancelled first.
    func until(stored count: Int) async -> Bool { await events.until { self.count() >= count } }
}
