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

    public func storedEventBytes() async throws(TrackingError) -> Int {
        do {
            return try await pooledRead { db in
                try Int.fetchOne(db, sql: "SELECT COALESCE(SUM(length(CAST(payload AS BLOB))), 0) FROM tracking_events") ?? 0
            }
        } catch {
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
        let from = since.map { Int64($0.timeIntervalSince1970 * 1000) }
        do {
            return try await pooledRead { db in
                let actions = try Dictionary(Row.fetchAll(db, sql: "SELECT action, COUNT(*) AS n FROM tracking_events"
                                                              + (from == nil ? "" : " WHERE ts >= ?") + " GROUP BY action",
                                                          arguments: StatementArguments(from.map { [$0] } ?? [])).map { ($0["action"] as String, $0["n"] as Int) },
                                             uniquingKeysWith: { $1 })
                let total = actions.values.reduce(0, +)
                // A window holding a small part of the events is read through the time index
                // (its entries only); a wide one, or everything, through the per-query and
                // per-product indexes, already in group order. MAX(id) stands for the table's size.
                var byTime = false
                if from != nil { byTime = total * 4 < (try Int.fetchOne(db, sql: "SELECT COALESCE(MAX(id), 0) FROM tracking_events") ?? 0) }
                return EventStats(total: total, actions: actions,
                                  queries: try Self.grouped("query_id", from: from, byTime: byTime, limit: limit, db),
                                  products: try Self.grouped("pid", from: from, byTime: byTime, limit: limit, db))
            }
        } catch {
            throw .storage(path: path, reason: SQLiteCatalogStore.wrap(error).description)
        }
    }

    /// Engagement per value of `column` (`query_id` or `pid`: never user text)
    /// from index entries alone; a query's picture and label (its `result_load`'s
    /// payload) are read for the rows returned only.
    static func grouped(_ column: String, from: Int64?, byTime: Bool, limit: Int, _ db: Database) throws -> [EventStats.Row] {
        let window = from == nil ? "" : "ts >= ? AND "
        let rows = try Row.fetchAll(db, sql: """
            SELECT \(column) AS key,
                   SUM(action IN ('view', 'product_view')) AS views,
                   SUM(action IN ('click', 'product_click')) AS clicks,
                   SUM(action = 'add_to_cart') AS carts,
                   SUM(action = 'transaction') AS transactions
            FROM tracking_events \(byTime ? "INDEXED BY tracking_events_time" : "") WHERE \(window)\(column) IS NOT NULL
            GROUP BY \(column) ORDER BY clicks DESC, views DESC, key LIMIT ?
            """, arguments: StatementArguments((from.map { [$0] } ?? []) + [Int64(limit)]))
        let described = column == "query_id"  // a result_load's picture and label describe its query, not a product
        let picture = described ? try db.cachedStatement(sql: """
            SELECT MAX(json_extract(payload, '$.imgUrl')) AS image, MAX(json_extract(payload, '$.label')) AS label
            FROM tracking_events WHERE query_id = ? AND action = 'result_load' AND ts >= ?
            """) : nil
        return try rows.map { row in
            let key: String = row["key"]
            let described = try picture.flatMap { try Row.fetchOne($0, arguments: [key, from ?? Int64.min]) }
            return EventStats.Row(key: key, views: row["views"], clicks: row["clicks"], addToCarts: row["carts"],
                                  transactions: row["transactions"], imageURL: described?["image"], label: described?["label"])
        }
    }

    public func timeline(since: Date?, bucketSeconds: Int) async throws(TrackingError) -> EventTimeline {
        let from = since.map { Int64($0.timeIntervalSince1970 * 1000) }
        let width = Int64(max(1, bucketSeconds)) * 1000
        do {
            return try await pooledRead { db in
                let rows = try Row.fetchAll(db, sql: """
                    SELECT (ts / ?) * ? AS start, action, COUNT(*) AS n FROM tracking_events INDEXED BY tracking_events_time
                    \(from == nil ? "" : "WHERE ts >= ?") GROUP BY start, action
                    """, arguments: StatementArguments([width, width] + (from.map { [$0] } ?? []))).map {
                    (start: $0["start"] as Int64, action: $0["action"] as String, count: $0["n"] as Int)
                }
                return EventTimeline(bucketSeconds: max(1, bucketSeconds), rows: rows)
            }
        } catch {
            throw .storage(path: path, reason: SQLiteCatalogStore.wrap(error).description)
        }
    }
}
