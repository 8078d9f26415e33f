import Foundation
import GRDB

/// The receiving side of tracking: what `vsearch serve` stores events in,
/// deduplicated by event id, and what `vsearch events stats` reads.
///
/// It lives in the **catalog's** SQLite file, beside the catalog's tables,
/// with its own tables (`tracking_*`) and its own record of applied
/// migrations (`tracking_migrations`) — it never touches the catalog's
/// schema, its GRDB migrations or its application id.
///
/// ```swift
/// let store = try EventStore(path: "catalog.sqlite")
/// let results = try store.receive(events)          // one result per event
/// let stats = try store.stats(since: Date().addingTimeInterval(-86_400))
/// ```
public final class EventStore: Sendable {
    /// The per-event answer: code 0 accepted (a duplicate too), else rejected with a message.
    public struct Result: Sendable, Hashable, Codable {
        public var code: Int
        public var message: String
        public static let accepted = Result(code: 0, message: "")
        public init(code: Int, message: String) {
            self.code = code
            self.message = message
        }
    }

    public let path: String
    let pool: DatabasePool

    /// Opens the store in an existing (or new) SQLite file and applies its migrations.
    /// - Throws: ``TrackingError/storage(path:reason:)``.
    public init(path: String) throws(TrackingError) {
        self.path = path
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        do {
            pool = try DatabasePool(path: path, configuration: configuration)
            try pool.write { db in try EventStore.migrate(db) }
        } catch {
            throw EventQueue.storageError(path, error)
        }
    }

    /// Named steps, recorded in `tracking_migrations`.
    static let migrations: [(name: String, sql: String)] = [
        ("tracking v1: events", """
            CREATE TABLE tracking_events (
                id INTEGER PRIMARY KEY,
                event_id TEXT NOT NULL UNIQUE,
                action TEXT NOT NULL,
                query_id TEXT,
                pid TEXT,
                ts INTEGER NOT NULL,
                received_at INTEGER NOT NULL,
                payload TEXT NOT NULL
            );
            CREATE INDEX tracking_events_ts ON tracking_events(ts);
            CREATE INDEX tracking_events_query ON tracking_events(query_id, action);
            CREATE INDEX tracking_events_pid ON tracking_events(pid, action);
            """),
    ]

    static func migrate(_ db: Database) throws {
        try db.execute(sql: "CREATE TABLE IF NOT EXISTS tracking_migrations (name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)")
        let applied = Set(try String.fetchAll(db, sql: "SELECT name FROM tracking_migrations"))
        for migration in migrations where !applied.contains(migration.name) {
            try db.execute(sql: migration.sql)
            try db.execute(sql: "INSERT INTO tracking_migrations (name, applied_at) VALUES (?, ?)",
                           arguments: [migration.name, Int64(Date().timeIntervalSince1970 * 1000)])
        }
    }

    /// Validates and stores events in one transaction. An invalid event is
    /// rejected (code 400, the rule in the message) without affecting the
    /// others; an event whose id is already stored is accepted and not stored again.
    /// Events without an id get one from their content, so a resent pixel is deduplicated.
    public func receive(_ events: [TrackingEvent]) throws(TrackingError) -> [Result] {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        do {
            return try pool.write { db in
                let insert = try db.cachedStatement(sql: """
                    INSERT OR IGNORE INTO tracking_events (event_id, action, query_id, pid, ts, received_at, payload)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """)
                return try events.map { event -> Result in
                    do throws(TrackingError) { try EventValidator.validate(event) } catch {
                        return Result(code: 400, message: error.description)
                    }
                    var event = event
                    if event.eventID?.isEmpty ?? true { event.eventID = EventStore.contentID(event) }
                    let payload = String(decoding: try encoder.encode(event), as: UTF8.self)
                    try insert.execute(arguments: [event.eventID, event.action.rawValue, event.queryId, event.pid, event.timestamp ?? now, now, payload])
                    return .accepted
                }
            }
        } catch {
            throw EventQueue.storageError(path, error)
        }
    }

    /// `h-` + a hash of the event's wire parameters.
    static func contentID(_ event: TrackingEvent) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in EventWireFormat.query(event, code: nil).utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return "h-" + String(hash, radix: 16)
    }

    /// Events stored (after deduplication).
    public func count() throws(TrackingError) -> Int {
        do { return try pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM tracking_events") ?? 0 } } catch {
            throw EventQueue.storageError(path, error)
        }
    }

    /// Engagement per query and per product, for events at or after `since`.
    public func stats(since: Date? = nil, limit: Int = 50) throws(TrackingError) -> EventStats {
        let from = since.map { Int64($0.timeIntervalSince1970 * 1000) } ?? Int64.min
        let grouped = { (column: String, db: Database) throws -> [EventStats.Row] in
            try Row.fetchAll(db, sql: """
                SELECT \(column) AS key,
                       SUM(action IN ('view', 'product_view')) AS views,
                       SUM(action IN ('click', 'product_click')) AS clicks,
                       SUM(action = 'add_to_cart') AS carts,
                       SUM(action = 'transaction') AS transactions
                FROM tracking_events WHERE ts >= ? AND \(column) IS NOT NULL
                GROUP BY \(column) ORDER BY clicks DESC, views DESC, key LIMIT ?
                """, arguments: [from, limit]).map { row in
                EventStats.Row(key: row["key"], views: row["views"], clicks: row["clicks"], addToCarts: row["carts"], transactions: row["transactions"])
            }
        }
        do {
            return try pool.read { db in
                let actions = try Dictionary(Row.fetchAll(db, sql: "SELECT action, COUNT(*) AS n FROM tracking_events WHERE ts >= ? GROUP BY action",
                                                          arguments: [from]).map { ($0["action"] as String, $0["n"] as Int) },
                                             uniquingKeysWith: { $1 })
                return EventStats(total: actions.values.reduce(0, +), actions: actions,
                                  queries: try grouped("query_id", db), products: try grouped("pid", db))
            }
        } catch {
            throw EventQueue.storageError(path, error)
        }
    }
}
