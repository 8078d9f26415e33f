import Foundation
import GRDB
import SearchEngine
import Tracking

/// The collector's events in the catalog file (`tracking_events`, created by
/// the catalog's own migration "v2: collector events").
extension SQLiteCatalogStore: CollectorStore {
    public func receive(_ events: [TrackingEvent]) async throws(TrackingError) -> [CollectorResult] {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        do {
            return try await pooledWrite { db in
                let insert = try db.cachedStatement(sql: """
                    INSERT OR IGNORE INTO tracking_events (event_id, action, query_id, pid, ts, received_at, payload)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """)
                return try events.map { event -> CollectorResult in
                    do throws(TrackingError) { try EventValidator.validate(event) } catch {
                        return CollectorResult(code: 400, message: error.description)
                    }
                    var event = event
                    if event.eventID?.isEmpty ?? true { event.eventID = event.contentID }
                    let payload = String(decoding: try encoder.encode(event), as: UTF8.self)
                    try insert.execute(arguments: [event.eventID, event.action.rawValue, event.queryId, event.pid, event.timestamp ?? now, now, payload])
                    return .accepted
                }
            }
        } catch {
            throw .storage(path: path, reason: SQLiteCatalogStore.wrap(error).description)
        }
    }

    public func eventCount() async throws(TrackingError) -> Int {
        do { return try await pooledRead { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM tracking_events") ?? 0 } } catch {
            throw .storage(path: path, reason: SQLiteCatalogStore.wrap(error).description)
        }
    }

    public func storedEvents(after cursor: Int64, limit: Int) async throws(TrackingError) -> [StoredEvent] {
        let decoder = JSONDecoder()
        do {
            return try await pooledRead { db in
                try Row.fetchAll(db, sql: "SELECT id, payload, ts FROM tracking_events WHERE id > ? ORDER BY id LIMIT ?",
                                 arguments: [cursor, max(0, limit)]).map { row in
                    var event = try decoder.decode(TrackingEvent.self, from: Data((row["payload"] as String).utf8))
                    if event.timestamp == nil { event.timestamp = row["ts"] }  // the time it was received
                    return StoredEvent(cursor: row["id"], event: event)
                }
            }
        } catch {
            throw .storage(path: path, reason: SQLiteCatalogStore.wrap(error).description)
        }
    }

    public func stats(since: Date?, limit: Int) async throws(TrackingError) -> EventStats {
        let from = since.map { Int64($0.timeIntervalSince1970 * 1000) } ?? Int64.min
        let grouped: @Sendable (String, Database) throws -> [EventStats.Row] = { column, db in
            try Row.fetchAll(db, sql: """
                SELECT \(column) AS key,
                       SUM(action IN ('view', 'product_view')) AS views,
                       SUM(action IN ('click', 'product_click')) AS clicks,
                       SUM(action = 'add_to_cart') AS carts,
                       SUM(action = 'transaction') AS transactions,
                       MAX(CASE WHEN action = 'result_load' THEN json_extract(payload, '$.imgUrl') END) AS image,
                       MAX(CASE WHEN action = 'result_load' THEN json_extract(payload, '$.label') END) AS label
                FROM tracking_events WHERE ts >= ? AND \(column) IS NOT NULL
                GROUP BY \(column) ORDER BY clicks DESC, views DESC, key LIMIT ?
                """, arguments: [from, limit]).map { row in
                let described = column == "query_id"  // a result_load's picture and label describe its query, not a product
                return EventStats.Row(key: row["key"], views: row["views"], clicks: row["clicks"], addToCarts: row["carts"],
                                      transactions: row["transactions"], imageURL: described ? row["image"] : nil,
                                      label: described ? row["label"] : nil)
            }
        }
        do {
            return try await pooledRead { db in
                let actions = try Dictionary(Row.fetchAll(db, sql: "SELECT action, COUNT(*) AS n FROM tracking_events WHERE ts >= ? GROUP BY action",
                                                          arguments: [from]).map { ($0["action"] as String, $0["n"] as Int) },
                                             uniquingKeysWith: { $1 })
                return EventStats(total: actions.values.reduce(0, +), actions: actions,
                                  queries: try grouped("query_id", db), products: try grouped("pid", db))
            }
        } catch {
            throw .storage(path: path, reason: SQLiteCatalogStore.wrap(error).description)
        }
    }

    public func timeline(since: Date?, bucketSeconds: Int) async throws(TrackingError) -> EventTimeline {
        let from = since.map { Int64($0.timeIntervalSince1970 * 1000) } ?? Int64.min
        let width = Int64(max(1, bucketSeconds)) * 1000
        do {
            return try await pooledRead { db in
                let rows = try Row.fetchAll(db, sql: """
                    SELECT (ts / ?) * ? AS start, action, COUNT(*) AS n FROM tracking_events
                    WHERE ts >= ? GROUP BY start, action
                    """, arguments: [width, width, from]).map { (start: $0["start"] as Int64, action: $0["action"] as String, count: $0["n"] as Int) }
                return EventTimeline(bucketSeconds: max(1, bucketSeconds), rows: rows)
            }
        } catch {
            throw .storage(path: path, reason: SQLiteCatalogStore.wrap(error).description)
        }
    }
}
