import SearchEngine
import Foundation
import PostgresNIO
import Tracking

/// The collector's events in the catalog's database: one multi-row insert
/// per batch, `ON CONFLICT DO NOTHING` on the event id — exactly once,
/// whichever replica receives a resent event.
extension PostgreSQLCatalogStore: CollectorStore {
    public func receive(_ events: [TrackingEvent]) async throws(TrackingError) -> [CollectorResult] {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        var results: [CollectorResult] = []
        var ids: [String] = [], actions: [String] = [], queries: [String] = [], products: [String] = []
        var stamps: [Int64] = [], payloads: [String] = []
        for event in events {
            do throws(TrackingError) { try EventValidator.validate(event) } catch {
                results.append(CollectorResult(code: 400, message: error.description))
                continue
            }
            var event = event
            if event.eventID?.isEmpty ?? true { event.eventID = event.contentID }
            // PostgreSQL text cannot hold NUL, and U+0001 marks "absent" below;
            // the payload is JSON, where both are escaped.
            let columns = [event.eventID, event.queryId, event.pid].compactMap { $0 }
            if columns.contains(where: { $0.unicodeScalars.contains { $0.value <= 1 } }) {
                results.append(CollectorResult(code: 400, message: "event id, queryId and pid may not contain the control characters U+0000 or U+0001"))
                continue
            }
            guard let payload = try? encoder.encode(event) else {
                results.append(CollectorResult(code: 400, message: "the event cannot be encoded as JSON"))
                continue
            }
            ids.append(event.eventID ?? "")
            actions.append(event.action.rawValue)
            queries.append(event.queryId ?? Self.absent)
            products.append(event.pid ?? Self.absent)
            stamps.append(event.timestamp ?? now)
            payloads.append(String(decoding: payload, as: UTF8.self))
            results.append(.accepted)
        }
        guard !ids.isEmpty else { return results }
        let query: PostgresQuery = """
            INSERT INTO tracking_events (event_id, action, query_id, pid, ts, received_at, payload)
            SELECT e, a, NULLIF(q, chr(1)), NULLIF(p, chr(1)), t, \(now), d
            FROM unnest(\(ids)::text[], \(actions)::text[], \(queries)::text[],
                        \(products)::text[], \(stamps)::bigint[], \(payloads)::text[]) AS v(e, a, q, p, t, d)
            ON CONFLICT (event_id) DO NOTHING
            """
        do {
            try await withTransaction { connection in
                try await connection.query(query, logger: Self.silent)
            }
        } catch {
            throw .storage(path: location, reason: error.description)
        }
        return results
    }

    public func storedEvents(after cursor: Int64, limit: Int) async throws(TrackingError) -> [StoredEvent] {
        let query: PostgresQuery = "SELECT id, payload, ts FROM tracking_events WHERE id > \(cursor) ORDER BY id LIMIT \(max(0, limit))"
        do {
            return try await withConnection { connection in
                let decoder = JSONDecoder()
                var events: [StoredEvent] = []
                for try await (id, payload, stamp) in try await connection.query(query, logger: Self.silent).decode((Int64, String, Int64).self) {
                    var event = try decoder.decode(TrackingEvent.self, from: Data(payload.utf8))
                    if event.timestamp == nil { event.timestamp = stamp }  // the time it was received
                    events.append(StoredEvent(cursor: id, event: event))
                }
                return events
            }
        } catch {
            throw .storage(path: location, reason: error.description)
        }
    }

    /// The array element standing for "no value" (`chr(1)` in SQL): arrays of
    /// optionals cannot be bound, and no accepted value holds this character.
    static let absent = "\u{1}"

    public func eventCount() async throws(TrackingError) -> Int {
        do {
            return try await withConnection { connection in
                var count = 0
                for try await value in try await connection.query("SELECT count(*) FROM tracking_events", logger: Self.silent).decode(Int.self) {
                    count = value
                }
                return count
            }
        } catch {
            throw .storage(path: location, reason: error.description)
        }
    }

    public func storedEventBytes() async throws(TrackingError) -> Int {
        do {
            return try await withConnection { connection in
                var bytes = 0
                for try await value in try await connection.query("SELECT COALESCE(sum(octet_length(payload)), 0)::bigint FROM tracking_events",
                                                                  logger: Self.silent).decode(Int.self) {
                    bytes = value
                }
                return bytes
            }
        } catch {
            throw .storage(path: location, reason: error.description)
        }
    }

    public func stats(since: Date?, limit: Int) async throws(TrackingError) -> EventStats {
        let from = since.map { Int64($0.timeIntervalSince1970 * 1000) } ?? Int64.min
        let limit = max(0, limit)
        do {
            return try await withConnection { connection in
                var actions: [String: Int] = [:]
                for try await (action, count) in try await connection.query(
                    "SELECT action, count(*) FROM tracking_events WHERE ts >= \(from) GROUP BY action", logger: Self.silent
                ).decode((String, Int).self) {
                    actions[action] = count
                }
                return EventStats(total: actions.values.reduce(0, +), actions: actions,
                                  queries: try await Self.grouped("query_id", from: from, limit: limit, connection),
                                  products: try await Self.grouped("pid", from: from, limit: limit, connection))
            }
        } catch {
            throw .storage(path: location, reason: error.description)
        }
    }

    public func timeline(since: Date?, bucketSeconds: Int) async throws(TrackingError) -> EventTimeline {
        let from = since.map { Int64($0.timeIntervalSince1970 * 1000) } ?? Int64.min
        let width = Int64(max(1, bucketSeconds)) * 1000
        var statement = PostgresQuery(unsafeSQL: """
            SELECT (ts / $1) * $1 AS start, action, count(*) FROM tracking_events
            WHERE ts >= $2 GROUP BY start, action
            """)
        statement.binds.append(width)
        statement.binds.append(from)
        let query = statement
        do {
            return try await withConnection { connection in
                var rows: [(start: Int64, action: String, count: Int)] = []
                for try await (start, action, count) in try await connection.query(query, logger: Self.silent).decode((Int64, String, Int).self) {
                    rows.append((start, action, count))
                }
                return EventTimeline(bucketSeconds: max(1, bucketSeconds), rows: rows)
            }
        } catch {
            throw .storage(path: location, reason: error.description)
        }
    }

    /// Engagement per value of `column` (`query_id` or `pid`: never user text).
    static func grouped(_ column: String, from: Int64, limit: Int, _ connection: PostgresConnection) async throws -> [EventStats.Row] {
        var sql = PostgresQuery(unsafeSQL: """
            SELECT \(column),
                   count(*) FILTER (WHERE action IN ('view', 'product_view')),
                   count(*) FILTER (WHERE action IN ('click', 'product_click')),
                   count(*) FILTER (WHERE action = 'add_to_cart'),
                   count(*) FILTER (WHERE action = 'transaction') AS transactions,
                   max(payload::jsonb ->> 'imgUrl') FILTER (WHERE action = 'result_load'),
                   max(payload::jsonb ->> 'label') FILTER (WHERE action = 'result_load')
            FROM tracking_events WHERE ts >= $1 AND \(column) IS NOT NULL
            GROUP BY \(column) ORDER BY 3 DESC, 2 DESC, \(column) COLLATE "C" LIMIT $2
            """)
        sql.binds.append(from)
        sql.binds.append(limit)
        var rows: [EventStats.Row] = []
        let described = column == "query_id"  // a result_load's picture and label describe its query, not a product
        for try await (key, views, clicks, carts, transactions, image, label) in try await connection.query(sql, logger: silent)
            .decode((String, Int, Int, Int, Int, String?, String?).self) {
            rows.append(EventStats.Row(key: key, views: views, clicks: clicks, addToCarts: carts, transactions: transactions,
                                       imageURL: described ? image : nil, label: described ? label : nil))
        }
        return rows
    }
}
