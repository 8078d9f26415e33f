// The durable queue and its tracker need GRDB, swift-log and ServiceLifecycle: the `Tracker` package trait (on by default).
#if Tracker
import Foundation
import Tracking
import GRDB

/// The durable queue: every accepted event is committed to SQLite before
/// `track` returns, and leaves the queue only once the receiving side has
/// confirmed or permanently rejected it.
///
/// Durability: WAL with `synchronous=NORMAL` by default — a committed event
/// survives the process being killed (`kill -9`, a crash, the OS ending an
/// app); ``Durability/power`` adds `synchronous=FULL` so it also survives
/// power loss, at the price of an fsync per event.
///
/// The queue also keeps the persisted identity (uid, session) and the
/// counters, so they survive restarts too.
///
/// ```swift
/// let queue = try EventQueue(path: ".vsearch/events-queue.sqlite", capacity: 100_000)
/// let filled = try await queue.append(event, now: Date())
/// let batch = try await queue.peek(limit: 50)
/// try await queue.markSent(batch.map(\.sequence))
/// ```
public final class EventQueue: Sendable {
    /// How hard a commit tries to reach the disk.
    public enum Durability: Sendable {
        /// Survives process death (WAL, synchronous=NORMAL). The default.
        case process
        /// Survives power loss too (synchronous=FULL).
        case power
    }

    /// One queued event with its position in the queue.
    public struct Entry: Sendable, Hashable {
        public var sequence: Int64
        public var event: TrackingEvent
        /// Failed delivery attempts so far.
        public var attempts: Int
    }

    public let path: String
    /// The most events kept; beyond it the oldest are dropped and counted. 100,000 by default.
    public let capacity: Int
    let database: DatabaseQueue
    let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()
    /// Sessions end after this long without an event: 30 minutes.
    public static let sessionTimeoutMilliseconds: Int64 = 30 * 60 * 1000

    /// Opens (creating) the queue.
    /// - Throws: ``TrackingError/storage(path:reason:)`` when the location cannot hold a database.
    /// - Parameter maxBytes: the largest the file may grow (appends then fail
    ///   with a storage error, "full"); unbounded by default.
    public init(path: String, capacity: Int = 100_000, durability: Durability = .process, maxBytes: Int? = nil) throws(TrackingError) {
        guard capacity >= 1 else { throw .invalidConfiguration("queue capacity \(capacity) is below 1") }
        self.path = path
        self.capacity = capacity
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty { try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: durability == .power ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL")
            if let maxBytes {
                let pageSize = try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4096
                try db.execute(sql: "PRAGMA max_page_count = \(max(1, maxBytes / pageSize))")
            }
        }
        do {
            database = try DatabaseQueue(path: path, configuration: configuration)
            try EventQueue.migrator.migrate(database)
        } catch {
            throw EventQueue.storageError(path, error)
        }
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: events, counters, identity") { db in
            try db.execute(sql: """
                CREATE TABLE events (
                    seq INTEGER PRIMARY KEY AUTOINCREMENT,
                    event_id TEXT NOT NULL UNIQUE,
                    payload TEXT NOT NULL,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    enqueued_at INTEGER NOT NULL
                );
                CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
                CREATE TABLE identity (key TEXT PRIMARY KEY, value TEXT NOT NULL);
                """)
        }
        migrator.registerMigration("v2: queued count kept as a counter (COUNT(*) is a scan)") { db in
            try db.execute(sql: "INSERT OR REPLACE INTO counters (name, value) VALUES ('queued', (SELECT COUNT(*) FROM events))")
        }
        return migrator
    }

    static func storageError(_ path: String, _ error: any Error) -> TrackingError {
        if let error = error as? TrackingError { return error }
        guard let error = error as? DatabaseError else { return .storage(path: path, reason: "\(error)") }
        let reason: String
        switch error.resultCode {
        case .SQLITE_FULL: reason = "the disk is full"
        case .SQLITE_READONLY: reason = "read-only: choose a writable location"
        case .SQLITE_CANTOPEN: reason = "cannot open or create the file: check the folder exists and is writable"
        case .SQLITE_CORRUPT, .SQLITE_NOTADB: reason = "not an event queue (corrupt or another file)"
        default: reason = error.message ?? "\(error.resultCode)"
        }
        return .storage(path: path, reason: reason)
    }

    /// Runs `body` in a write transaction on GRDB's own thread; the caller's task is suspended meanwhile, never
    /// blocking a thread of the cooperative pool (an fsync per event with ``Durability/power``).
    func write<T: Sendable>(_ body: @Sendable (Database) throws -> T) async throws(TrackingError) -> T {
        do { return try await database.write(body) } catch { throw EventQueue.storageError(path, error) }
    }

    /// Runs `body` reading, on GRDB's own thread, as ``write(_:)``.
    func read<T: Sendable>(_ body: @Sendable (Database) throws -> T) async throws(TrackingError) -> T {
        do { return try await database.read(body) } catch { throw EventQueue.storageError(path, error) }
    }

    // MARK: - Appending

    /// Fills the event's identity, id and time, commits it, and returns it
    /// as stored. When the queue is full the oldest events are dropped first.
    /// The event is not validated here (``Tracker`` does that).
    public func append(_ event: TrackingEvent, now: Date) async throws(TrackingError) -> TrackingEvent {
        try await append([event], now: now)[0]
    }

    /// Appends several events in one transaction.
    public func append(_ events: [TrackingEvent], now: Date) async throws(TrackingError) -> [TrackingEvent] {
        let milliseconds = Int64((now.timeIntervalSince1970 * 1000).rounded(.down))
        let capacity = self.capacity
        let encoder = self.encoder
        return try await write { db -> [TrackingEvent] in
            let (uid, sid) = try EventQueue.identity(db, now: milliseconds)
            var stored: [TrackingEvent] = []
            var added = 0
            let insert = try db.cachedStatement(sql: "INSERT OR IGNORE INTO events (event_id, payload, enqueued_at) VALUES (?, ?, ?)")
            for var event in events {
                if event.uid?.isEmpty ?? true { event.uid = uid }
                if event.sid?.isEmpty ?? true { event.sid = sid }
                if event.eventID?.isEmpty ?? true { event.eventID = UUID().uuidString.lowercased() }
                if event.timestamp == nil { event.timestamp = milliseconds }
                let payload = String(decoding: try encoder.encode(event), as: UTF8.self)
                try insert.execute(arguments: [event.eventID, payload, milliseconds])
                added += db.changesCount
                stored.append(event)
            }
            try EventQueue.bump(db, "accepted", by: added)
            let queued = try EventQueue.bump(db, "queued", by: added)
            if queued > capacity {
                let excess = queued - capacity
                try db.execute(sql: "DELETE FROM events WHERE seq IN (SELECT seq FROM events ORDER BY seq LIMIT ?)", arguments: [excess])
                try EventQueue.bump(db, "dropped_queue_full", by: excess)
                try EventQueue.bump(db, "queued", by: -excess)
            }
            return stored
        }
    }

    // MARK: - Delivery bookkeeping

    /// The oldest `limit` events, oldest first.
    public func peek(limit: Int) async throws(TrackingError) -> [Entry] {
        let decoder = JSONDecoder()
        return try await read { db in
            try Row.fetchAll(db, sql: "SELECT seq, payload, attempts FROM events ORDER BY seq LIMIT ?", arguments: [limit]).compactMap { row in
                let payload: String = row["payload"]
                guard let event = try? decoder.decode(TrackingEvent.self, from: Data(payload.utf8)) else { return nil }
                return Entry(sequence: row["seq"], event: event, attempts: row["attempts"])
            }
        }
    }

    /// Removes delivered events and counts them sent.
    public func markSent(_ sequences: [Int64]) async throws(TrackingError) {
        try await remove(sequences, counter: "sent")
    }

    /// Removes permanently rejected events and counts them dropped.
    public func markRejected(_ sequences: [Int64]) async throws(TrackingError) {
        try await remove(sequences, counter: "dropped_rejected")
    }

    /// Counts one more failed attempt for each event (they stay queued).
    public func markRetried(_ sequences: [Int64]) async throws(TrackingError) {
        guard !sequences.isEmpty else { return }
        try await write { db in
            for sequence in sequences {
                try db.execute(sql: "UPDATE events SET attempts = attempts + 1 WHERE seq = ?", arguments: [sequence])
            }
            try EventQueue.bump(db, "retried", by: sequences.count)
        }
    }

    func remove(_ sequences: [Int64], counter: String) async throws(TrackingError) {
        guard !sequences.isEmpty else { return }
        try await write { db in
            var removed = 0
            let delete = try db.cachedStatement(sql: "DELETE FROM events WHERE seq = ?")
            for sequence in sequences {
                try delete.execute(arguments: [sequence])
                removed += db.changesCount
            }
            try EventQueue.bump(db, counter, by: removed)
            try EventQueue.bump(db, "queued", by: -removed)
        }
    }

    /// Events waiting.
    public func count() async throws(TrackingError) -> Int {
        try await read { db in try Int.fetchOne(db, sql: "SELECT value FROM counters WHERE name = 'queued'") ?? 0 }
    }

    /// The counters, ``TrackingCounters/queued`` read live.
    public func counters() async throws(TrackingError) -> TrackingCounters {
        try await read { db in
            var counters = TrackingCounters()
            let values = try Dictionary(Row.fetchAll(db, sql: "SELECT name, value FROM counters").map { ($0["name"] as String, $0["value"] as Int) },
                                        uniquingKeysWith: { $1 })
            counters.accepted = values["accepted"] ?? 0
            counters.sent = values["sent"] ?? 0
            counters.retried = values["retried"] ?? 0
            counters.droppedRejected = values["dropped_rejected"] ?? 0
            counters.droppedQueueFull = values["dropped_queue_full"] ?? 0
            counters.queued = values["queued"] ?? 0
            return counters
        }
    }

    /// Adds to a counter and returns its new value.
    @discardableResult
    static func bump(_ db: Database, _ name: String, by amount: Int) throws -> Int {
        try Int.fetchOne(db.cachedStatement(sql: """
            INSERT INTO counters (name, value) VALUES (?, ?)
            ON CONFLICT (name) DO UPDATE SET value = value + excluded.value RETURNING value
            """), arguments: [name, amount]) ?? amount
    }

    // MARK: - Identity

    /// The persisted uid and the current session id at `now` (ms).
    public func identity(now: Date) async throws(TrackingError) -> (uid: String, sid: String) {
        let milliseconds = Int64((now.timeIntervalSince1970 * 1000).rounded(.down))
        return try await write { db in try EventQueue.identity(db, now: milliseconds) }
    }

    /// The uid is made once. The session is a **sliding** 30-minute window
    /// (Android and JS; the Swift SDK's fixed window ends sessions mid-use)
    /// that also ends when the UTC day changes, as in every SDK.
    static func identity(_ db: Database, now: Int64) throws -> (uid: String, sid: String) {
        let stored = try Dictionary(Row.fetchAll(db.cachedStatement(sql: "SELECT key, value FROM identity")).map { ($0["key"] as String, $0["value"] as String) },
                                    uniquingKeysWith: { $1 })
        var values = stored
        if values["uid"] == nil { values["uid"] = UUID().uuidString.lowercased() }
        let last = values["sid_last"].flatMap { Int64($0) }
        let day: (Int64) -> Int64 = { $0 / 86_400_000 }
        if values["sid"] == nil || last == nil || now - last! > sessionTimeoutMilliseconds || day(now) != day(last!) {
            values["sid"] = UUID().uuidString.lowercased()
        }
        // The session's last activity is written at most once a minute (the
        // window slides by the minute), so most appends write only the event.
        var changed: [String] = stored == values ? [] : ["uid", "sid"]
        if changed.isEmpty == false || last == nil || now - last! >= 60_000 || now < last! {
            values["sid_last"] = String(now)
            changed.append("sid_last")
        }
        let upsert = try db.cachedStatement(sql: "INSERT INTO identity (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value")
        for key in changed { try upsert.execute(arguments: [key, values[key]]) }
        return (values["uid"]!, values["sid"]!)
    }
}
#endif
