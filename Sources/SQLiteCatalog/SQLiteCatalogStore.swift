import ConcurrencyToolkit
import Foundation
import GRDB
import SearchEngine
import VisualSearch

/// The embedded catalog store: one SQLite file in WAL mode, through GRDB.
///
/// Tables (created by named migrations, see ``migrator``):
/// - `images`: `id`, `im_name` (unique), `source`, `width`, `height`,
///   `content_hash`, `features` (Float32 BLOB), `palette` (JSON), timestamps;
/// - `fields`: the declared schema, `name` → `type` (string/text/int/float);
/// - `image_values`: one row per image and field, `text_value` or
///   `number_value`, indexed by (field, value) so `fq` filters narrow in SQL;
/// - `image_text`: an FTS5 index over `text` fields (rowid = `image_values.id`);
/// - `catalog_state`: the version counter other processes watch;
/// - `tracking_events`: the collector's events, deduplicated by event id;
/// - `insert_transactions`: the data API's insert progress (JSON), by id.
///
/// The file is marked with `PRAGMA application_id` ('vsch'), so a foreign
/// SQLite file is refused instead of being altered. Every write is one
/// transaction: a process killed at any moment leaves every committed batch
/// and nothing of an uncommitted one. `synchronous=NORMAL` in WAL mode:
/// commits survive process crashes; a power loss may drop the last commits
/// but never corrupts the file.
///
/// ```swift
/// let catalog = try await SQLiteCatalogStore(path: "catalog.sqlite", creating: true)
/// try await catalog.declare(FieldSchema(parsing: "brand:string,price:float"))
/// ```
public final class SQLiteCatalogStore: CatalogStore, Sendable {
    /// 'vsch', stored in the SQLite header.
    public static let applicationID: Int32 = 0x7673_6368

    /// The database file.
    public let path: String
    public var location: String { path }
    let pool: DatabasePool
    /// Where reads go: the pool, or one snapshot of it (``withSnapshot(_:)``).
    let reader: any DatabaseReader
    /// A snapshot's store reads one state of the catalog and refuses writes.
    let isSnapshot: Bool

    /// Opens and migrates a catalog; with `creating`, makes it (and its
    /// folder) when it does not exist yet (`vsearch index`, `catalog migrate`
    /// and the vector-loading debug commands do; reading commands never).
    ///
    /// The file work (opening, marking, migrating) runs on a thread of its
    /// own, never on the caller's executor; when another process holds the
    /// file's lock while it switches modes or migrates, opening waits 20 ms
    /// (a task sleep) and tries again, up to 50 times.
    /// - Throws: ``CatalogStoreError/notFound(location:)`` for a missing
    ///   file when not `creating`, ``CatalogStoreError/unusable(location:reason:)``
    ///   for a corrupt, foreign, busy or unwritable one.
    public init(path: String, creating: Bool = false) async throws(CatalogStoreError) {
        self.path = path
        if !FileManager.default.fileExists(atPath: path) {
            guard creating else { throw .notFound(location: path) }
            let directory = (path as NSString).deletingLastPathComponent
            if !directory.isEmpty {
                do { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) } catch {
                    throw .unusable(location: path, reason: "cannot create its folder \(directory): \(error.localizedDescription)")
                }
            }
        }
        var attempt = 0
        while true {
            do {
                pool = try await OwnThread.run(named: "vsearch-sqlite") { try SQLiteCatalogStore.open(path: path, configuration: SQLiteCatalogStore.configuration) }
                reader = pool
                isSnapshot = false
                break
            } catch let error as DatabaseError where (error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED) && attempt < 50 {
                attempt += 1  // another process is switching modes or migrating: wait briefly and retry
                try? await Task.sleep(for: .milliseconds(20))
            } catch let error as CatalogStoreError {
                throw error
            } catch let error as DatabaseError {
                if error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED {
                    throw .unusable(location: path, reason: "busy: another process holds a lock on it; try again")
                }
                throw .unusable(location: path, reason: "\(error.message ?? "\(error.resultCode)") — the file is corrupt or not a vsearch catalog")
            } catch {
                throw .unusable(location: path, reason: "\(error)")
            }
        }
    }

    /// A store reading through `reader` (a snapshot of `pool`), refusing writes.
    init(path: String, pool: DatabasePool, snapshot reader: any DatabaseReader) {
        self.path = path
        self.pool = pool
        self.reader = reader
        isSnapshot = true
    }

    /// How every connection is set up: WAL's `synchronous = NORMAL`, and a
    /// writer waits up to 10 s for another process's lock (on GRDB's writer
    /// thread: callers await it, no task's thread is held).
    static var configuration: Configuration {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        return configuration
    }

    /// Opens the pool, marking and migrating a new file. An existing,
    /// migrated catalog is only read here, so any number of processes can
    /// open it while another one writes.
    static func open(path: String, configuration: Configuration) throws -> DatabasePool {
        try refuseForeignFile(at: path)
        let pool = try DatabasePool(path: path, configuration: configuration)
        let (applicationID, tableCount) = try pool.read { db in
            (try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0, try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sqlite_master") ?? 0)
        }
        if applicationID != SQLiteCatalogStore.applicationID {
            guard tableCount == 0 else {
                throw CatalogStoreError.unusable(location: path, reason: "not a vsearch catalog (another application's SQLite file); choose another catalog path")
            }
            try pool.write { db in try db.execute(sql: "PRAGMA application_id = \(SQLiteCatalogStore.applicationID)") }
        }
        if try !pool.read({ db in try migrator.hasCompletedMigrations(db) }) {
            try migrator.migrate(pool)
        }
        return pool
    }

    /// Opens an existing file read-only first, so a foreign SQLite file is
    /// refused before anything (even switching it to WAL) touches it.
    static func refuseForeignFile(at path: String) throws {
        guard let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? Int, size > 0 else { return }
        var configuration = Configuration()
        configuration.readonly = true
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        try queue.read { db in
            let applicationID = try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0
            let tableCount = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sqlite_master") ?? 0
            if applicationID != SQLiteCatalogStore.applicationID && tableCount > 0 {
                throw CatalogStoreError.unusable(location: path, reason: "not a vsearch catalog (another application's SQLite file); choose another catalog path")
            }
        }
        try queue.close()
    }

    /// The schema migrations, as named steps.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: images, fields, values, full-text") { db in
            try db.execute(sql: """
                CREATE TABLE images (
                    id INTEGER PRIMARY KEY,
                    im_name TEXT NOT NULL UNIQUE,
                    source TEXT NOT NULL,
                    width INTEGER NOT NULL,
                    height INTEGER NOT NULL,
                    content_hash TEXT NOT NULL,
                    features BLOB NOT NULL,
                    palette TEXT NOT NULL,
                    created_at DOUBLE NOT NULL,
                    updated_at DOUBLE NOT NULL
                );
                CREATE TABLE fields (
                    name TEXT PRIMARY KEY,
                    type TEXT NOT NULL CHECK (type IN ('string', 'text', 'int', 'float'))
                );
                CREATE TABLE image_values (
                    id INTEGER PRIMARY KEY,
                    image_id INTEGER NOT NULL REFERENCES images(id) ON DELETE CASCADE,
                    field TEXT NOT NULL,
                    text_value TEXT,
                    number_value DOUBLE,
                    UNIQUE (image_id, field)
                );
                CREATE INDEX image_values_text ON image_values(field, text_value);
                CREATE INDEX image_values_number ON image_values(field, number_value);
                CREATE VIRTUAL TABLE image_text USING fts5(value, field UNINDEXED, tokenize = 'unicode61 remove_diacritics 2');
                CREATE TABLE catalog_state (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL);
                INSERT INTO catalog_state (id, version) VALUES (1, 0);
                """)
        }
        migrator.registerMigration("v2: collector events") { db in
            // Catalogs written before this migration may already hold the
            // collector's table (it kept its own migration record then).
            try db.execute(sql: """
                CREATE TABLE IF NOT EXISTS tracking_events (
                    id INTEGER PRIMARY KEY,
                    event_id TEXT NOT NULL UNIQUE,
                    action TEXT NOT NULL,
                    query_id TEXT,
                    pid TEXT,
                    ts INTEGER NOT NULL,
                    received_at INTEGER NOT NULL,
                    payload TEXT NOT NULL
                );
                CREATE INDEX IF NOT EXISTS tracking_events_ts ON tracking_events(ts);
                CREATE INDEX IF NOT EXISTS tracking_events_query ON tracking_events(query_id, action);
                CREATE INDEX IF NOT EXISTS tracking_events_pid ON tracking_events(pid, action);
                DROP TABLE IF EXISTS tracking_migrations;
                """)
        }
        migrator.registerMigration("v3: insert transactions") { db in
            try db.execute(sql: """
                CREATE TABLE insert_transactions (
                    trans_id TEXT PRIMARY KEY,
                    progress TEXT NOT NULL,
                    started_at DOUBLE NOT NULL
                );
                CREATE INDEX insert_transactions_started ON insert_transactions(started_at);
                """)
        }
        migrator.registerMigration("v4: learned vectors") { db in
            // The learned embedding of each image (float32 BLOB, NULL when indexed
            // without the model) and what made them, by role ('learned').
            try db.execute(sql: """
                ALTER TABLE images ADD COLUMN learned BLOB;
                CREATE TABLE catalog_models (
                    role TEXT PRIMARY KEY,
                    descriptor TEXT NOT NULL
                );
                """)
        }
        migrator.registerMigration("v5: covering indexes for event stats") { db in
            // Statistics read only index entries: per window by time (action,
            // query and product beside it), over everything by query or product
            // (action and time beside them). The narrower indexes they replace
            // made every grouped statistic look up each event's row (1M events: 3.9 s).
            try db.execute(sql: """
                DROP INDEX IF EXISTS tracking_events_ts;
                DROP INDEX IF EXISTS tracking_events_query;
                DROP INDEX IF EXISTS tracking_events_pid;
                CREATE INDEX tracking_events_time ON tracking_events(ts, action, query_id, pid);
                CREATE INDEX tracking_events_query_time ON tracking_events(query_id, action, ts);
                CREATE INDEX tracking_events_pid_time ON tracking_events(pid, action, ts);
                """)
        }
        migrator.registerMigration("v6: image changes") { db in
            // Which images each version changed (added, replaced or removed), for engines to catch up
            // without reading every row (``changes(since:)``); complete from `changes_since` on.
            try db.execute(sql: """
                CREATE TABLE image_changes (version INTEGER NOT NULL, image_id INTEGER NOT NULL);
                CREATE INDEX image_changes_version ON image_changes(version);
                ALTER TABLE catalog_state ADD COLUMN changes_since INTEGER NOT NULL DEFAULT 0;
                UPDATE catalog_state SET changes_since = version;
                """)
        }
        migrator.registerMigration("v7: covering index for content hashes") { db in
            // `contentHashes()` (what `vsearch index` skips, what `serve` and `info` count) reads this index,
            // not every row: at a million learned rows of a page each, the table scan was seconds of a start.
            try db.execute(sql: "CREATE INDEX images_content_hash ON images(im_name, content_hash)")
        }
        return migrator
    }

    // MARK: - Schema

    /// The declared fields.
    public func schema() async throws(CatalogStoreError) -> FieldSchema {
        try await read { db in
            var fields: [String: FieldType] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT name, type FROM fields") {
                if let type = FieldType(rawValue: row["type"]) { fields[row["name"]] = type }
            }
            return FieldSchema(fields: fields)
        }
    }

    /// Adds fields to the schema, in one transaction that moves the version
    /// when a field is new or retyped (engines cache the schema by version).
    /// A field declared with another type is retyped when no image has a value
    /// for it; otherwise that is an error (``CatalogStoreError/retypeRefusal(field:current:requested:imagesWithValues:)``)
    /// and nothing changes.
    public func declare(_ schema: FieldSchema) async throws(CatalogStoreError) {
        try await write { db in
            var existing: [String: String] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT name, type FROM fields") { existing[row["name"]] = row["type"] }
            let fields = schema.fields.sorted(by: { $0.key < $1.key })
            var retyped: [(String, FieldType)] = []
            for (name, type) in fields {
                if let current = existing[name], current != type.rawValue {
                    let used = try Int.fetchOne(db, sql: "SELECT count(DISTINCT image_id) FROM image_values WHERE field = ?", arguments: [name]) ?? 0
                    guard used == 0 else {
                        throw CatalogStoreError.retypeRefusal(field: name, current: current, requested: type, imagesWithValues: used)
                    }
                    retyped.append((name, type))
                }
            }
            let new = fields.filter { existing[$0.key] == nil }
            for (name, type) in new {
                try db.execute(sql: "INSERT INTO fields (name, type) VALUES (?, ?)", arguments: [name, type.rawValue])
            }
            for (name, type) in retyped {
                try db.execute(sql: "UPDATE fields SET type = ? WHERE name = ?", arguments: [type.rawValue, name])
            }
            if !new.isEmpty || !retyped.isEmpty { try SQLiteCatalogStore.bumpVersion(db) }
        }
    }

    // MARK: - Writing

    /// Inserts or replaces items by `im_name`, all in one transaction.
    /// Metadata that does not fit the schema is refused before anything is written.
    public func upsert(_ items: [CatalogItem], schema: FieldSchema) async throws(CatalogStoreError) {
        guard !items.isEmpty else { return }
        try CatalogItem.checkVectors(of: items)
        try checkingInput { () throws(VisualSearchError) in try MetadataTable.check(items.map { ($0.imageName, $0.metadata) }, schema: schema) }
        let now = Date().timeIntervalSince1970
        try await write { db in
            let learnedDimension = try SQLiteCatalogStore.learnedModel(db)?.dimension
            var changed: [Int64] = []
            for item in items {
                if let learned = item.learned, learned.count != learnedDimension {
                    throw CatalogStoreError.invalidValue(name: "learned", reason: "\(item.imageName)'s learned vector has \(learned.count) values; "
                        + (learnedDimension.map { "the catalog's model makes \($0)" } ?? "the catalog has recorded no learned model"))
                }
                let blob = item.features.withUnsafeBufferPointer { Data(buffer: $0) }
                let learnedBlob = item.storedLearned.map { $0.withUnsafeBufferPointer { Data(buffer: $0) } }
                let palette = String(decoding: (try? JSONEncoder().encode(item.palette)) ?? Data("{\"entries\":[]}".utf8), as: UTF8.self)
                let id = try Int64.fetchOne(db, sql: """
                    INSERT INTO images (im_name, source, width, height, content_hash, features, learned, palette, created_at, updated_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (im_name) DO UPDATE SET source = excluded.source, width = excluded.width,
                        height = excluded.height, content_hash = excluded.content_hash, features = excluded.features,
                        learned = excluded.learned, palette = excluded.palette, updated_at = excluded.updated_at
                    RETURNING id
                    """, arguments: [item.imageName, item.source, item.width, item.height, item.contentHash, blob, learnedBlob, palette, now, now])
                guard let id else { continue }
                changed.append(id)
                try SQLiteCatalogStore.replaceValues(of: id, with: item.metadata, schema: schema, in: db)
            }
            try SQLiteCatalogStore.bumpVersion(db, changing: changed)
        }
    }

    static func replaceValues(of id: Int64, with metadata: [String: String], schema: FieldSchema, in db: Database) throws {
        try db.execute(sql: "DELETE FROM image_text WHERE rowid IN (SELECT id FROM image_values WHERE image_id = ?)", arguments: [id])
        try db.execute(sql: "DELETE FROM image_values WHERE image_id = ?", arguments: [id])
        for (field, value) in metadata.sorted(by: { $0.key < $1.key }) {
            guard let type = schema.fields[field], !value.isEmpty else { continue }
            let number: Double? = type.isNumeric ? Double(value) : nil
            try db.execute(sql: "INSERT INTO image_values (image_id, field, text_value, number_value) VALUES (?, ?, ?, ?)",
                           arguments: [id, field, value, number])
            if type == .text {
                try db.execute(sql: "INSERT INTO image_text (rowid, value, field) VALUES (?, ?, ?)",
                               arguments: [db.lastInsertedRowID, value, field])
            }
        }
    }

    /// Replaces the metadata of existing images (their features are kept), in one transaction.
    public func updateMetadata(_ updates: [MetadataUpdate], schema: FieldSchema) async throws(CatalogStoreError) {
        try checkingInput { () throws(VisualSearchError) in try MetadataTable.check(updates.map { ($0.imageName, $0.metadata) }, schema: schema) }
        try await write { db in
            var updated = 0
            for update in updates {
                guard let id = try Int64.fetchOne(db, sql: "SELECT id FROM images WHERE im_name = ?", arguments: [update.imageName]) else { continue }
                try SQLiteCatalogStore.replaceValues(of: id, with: update.metadata, schema: schema, in: db)
                updated += 1
            }
            if updated > 0 { try SQLiteCatalogStore.bumpVersion(db) }
        }
    }

    /// Removes images by name; returns how many existed.
    @discardableResult
    public func remove(_ imageNames: [String]) async throws(CatalogStoreError) -> Int {
        try await write { db in
            var removedIDs: [Int64] = []
            for name in imageNames {
                guard let id = try Int64.fetchOne(db, sql: "SELECT id FROM images WHERE im_name = ?", arguments: [name]) else { continue }
                try db.execute(sql: "DELETE FROM image_text WHERE rowid IN (SELECT id FROM image_values WHERE image_id = ?)", arguments: [id])
                try db.execute(sql: "DELETE FROM image_values WHERE image_id = ?", arguments: [id])
                try db.execute(sql: "DELETE FROM images WHERE id = ?", arguments: [id])
                removedIDs.append(id)
            }
            if !removedIDs.isEmpty { try SQLiteCatalogStore.bumpVersion(db, changing: removedIDs) }
            let removed = removedIDs.count
            return removed
        }
    }

    // MARK: - Reading

    /// `im_name` → content hash, for skipping unchanged files.
    /// One pass over the content hashes (the covering index `images_content_hash`), counted as they are read.
    public func featureCensus() async throws(CatalogStoreError) -> (learned: Int, stale: Int) {
        try await read { db in
            var census = FeatureCensus(model: try SQLiteCatalogStore.learnedModel(db))
            let hashes = try String.fetchCursor(db, sql: "SELECT content_hash FROM images")
            while let hash = try hashes.next() { census.count(hash) }
            return (census.learned, census.stale)
        }
    }

    public func contentHashes() async throws(CatalogStoreError) -> [String: String] {
        try await read { db in
            var hashes: [String: String] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT im_name, content_hash FROM images") {
                hashes[row["im_name"]] = row["content_hash"]
            }
            return hashes
        }
    }

    /// The number of images.
    public func count() async throws(CatalogStoreError) -> Int {
        try await read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM images") ?? 0 }
    }

    public func imageNames(offset: Int, limit: Int) async throws(CatalogStoreError) -> [String] {
        try await read { db in
            try String.fetchAll(db, sql: "SELECT im_name FROM images ORDER BY im_name LIMIT ? OFFSET ?",
                                arguments: [max(0, limit), max(0, offset)])
        }
    }

    /// A counter bumped by every committed change to the images, by any
    /// process: engines reload their in-memory index when it moves.
    public func version() async throws(CatalogStoreError) -> Int {
        try await read { db in try Int.fetchOne(db, sql: "SELECT version FROM catalog_state WHERE id = 1") ?? 0 }
    }

    /// Moves the version, logging the images `changing` changed (``changes(since:)``) and
    /// forgetting what changed more than ``changesKept`` versions ago.
    static func bumpVersion(_ db: Database, changing ids: [Int64] = []) throws {
        try db.execute(sql: "UPDATE catalog_state SET version = version + 1 WHERE id = 1")
        guard !ids.isEmpty else { return }
        let version = try Int.fetchOne(db, sql: "SELECT version FROM catalog_state WHERE id = 1") ?? 0
        let statement = try db.cachedStatement(sql: "INSERT INTO image_changes (version, image_id) VALUES (?, ?)")
        for id in ids { try statement.execute(arguments: [version, id]) }
        if version % 64 == 0 {  // now and then: a version's worth of deletes is cheap, one per write is waste
            try db.execute(sql: "DELETE FROM image_changes WHERE version <= ?", arguments: [version - changesKept])
            try db.execute(sql: "UPDATE catalog_state SET changes_since = MAX(changes_since, ?) WHERE id = 1", arguments: [version - changesKept])
        }
    }

    /// Versions of changes kept: an engine further behind loads every row again.
    static let changesKept = 1000
    /// Changed images past which ``changes(since:)`` says "load again": reading that many rows by id is no faster.
    static let largestChanges = 200_000

    /// Forgets every logged change: what happened before now cannot be told as changes (a new model).
    static func resetChanges(_ db: Database) throws {
        try db.execute(sql: "DELETE FROM image_changes")
        try db.execute(sql: "UPDATE catalog_state SET changes_since = version WHERE id = 1")
    }

    /// The images added, replaced or removed after `version`, in one read: nil when the log does not reach back
    /// that far (or the version went back: another catalog file, a restored copy) or holds more than ``largestChanges``.
    public func changes(since version: Int) async throws(CatalogStoreError) -> CatalogChanges? {
        try await read { db in
            guard let state = try Row.fetchOne(db, sql: "SELECT version, changes_since FROM catalog_state WHERE id = 1") else { return nil }
            let current: Int = state[0], since: Int = state[1]
            guard version >= since, version <= current else { return nil }
            let ids = try Int64.fetchAll(db, sql: "SELECT DISTINCT image_id FROM image_changes WHERE version > ? LIMIT ?",
                                         arguments: [version, Self.largestChanges + 1])
            guard ids.count <= Self.largestChanges else { return nil }
            let rows = try Self.loadIndex(db, learned: .compact, ids: ids)
            let present = Set(rows.ids)
            return CatalogChanges(version: current, rows: rows, removed: ids.filter { !present.contains($0) })
        }
    }

    /// Loads every image's vectors into a ``FeatureIndex``: the learned ones
    /// too as `loading` says, when the catalog records a learned model (a row
    /// whose learned vector is missing or of another length holds none).
    ///
    /// Sized from the row count first, then each row's blobs are read where SQLite
    /// holds them (no `Data` or array per row: the index copies and quantizes from
    /// them) and its palette decoded by ``DominantColors/init(json:)``. A blob counts
    /// as its whole `Float`s, as a `Float` array bound over it would.
    public func loadIndex(learned loading: LearnedVectorLoading = .compact) async throws(CatalogStoreError) -> FeatureIndex {
        try await read { db in try SQLiteCatalogStore.loadIndex(db, learned: loading, ids: nil) }
    }

    /// The images of `ids` as ``loadIndex(learned:)`` loads them (unknown ids left out), by their primary key.
    public func loadIndex(ids: [Int64]) async throws(CatalogStoreError) -> FeatureIndex {
        try await read { db in try SQLiteCatalogStore.loadIndex(db, learned: .compact, ids: ids) }
    }

    /// Every image (or those of `ids`) into a ``FeatureIndex``, in one read.
    static func loadIndex(_ db: Database, learned loading: LearnedVectorLoading, ids: [Int64]?) throws -> FeatureIndex {
        let learnedDimension = loading != .none ? try SQLiteCatalogStore.learnedModel(db)?.dimension ?? 0 : 0
        var index = FeatureIndex(dimensions: ColorFeatures.dimensions, learnedDimensions: learnedDimension, keepsExactLearned: loading == .exact)
        let selected = ids.map { " WHERE id IN (" + $0.map(String.init).joined(separator: ",") + ")" } ?? ""
        index.reserveCapacity(try ids?.count ?? Int.fetchOne(db, sql: "SELECT COUNT(*) FROM images") ?? 0)
        let rows = try Row.fetchCursor(db, sql: "SELECT id, im_name, source, features, \(learnedDimension > 0 ? "learned" : "NULL"), palette FROM images\(selected) ORDER BY id")
        let floatSize = MemoryLayout<Float>.size
        while let row = try rows.next() {
            try row.withUnsafeData(atIndex: 3) { features in
                guard let features, features.count / floatSize == index.dimensions else { return }
                try row.withUnsafeData(atIndex: 4) { learned in
                    try row.withUnsafeData(atIndex: 5) { palette in
                        features.withUnsafeBytes { features in
                            Self.withWholeFloats(of: learned) { learned in
                                let palette = palette.flatMap { $0.withUnsafeBytes(DominantColors.init(json:)) } ?? DominantColors(entries: [])
                                index.append(id: row[0], name: row[1], source: row[2], vectorBytes: UnsafeRawBufferPointer(rebasing: features[..<(index.dimensions * floatSize)]),
                                             learnedBytes: learned, palette: palette)
                            }
                        }
                    }
                }
            }
        }
        return index
    }

    /// `body` given the bytes of a blob's whole `Float`s (nil for NULL).
    private static func withWholeFloats<T>(of blob: Data?, _ body: (UnsafeRawBufferPointer?) -> T) -> T {
        guard let blob else { return body(nil) }
        return blob.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[..<($0.count / MemoryLayout<Float>.size * MemoryLayout<Float>.size)])) }
    }

    /// What made the catalog's learned vectors; nil when it has none.
    public func learnedModel() async throws(CatalogStoreError) -> EmbeddingDescriptor? {
        try await read { db in try SQLiteCatalogStore.learnedModel(db) }
    }

    static func learnedModel(_ db: Database) throws -> EmbeddingDescriptor? {
        guard let text = try String.fetchOne(db, sql: "SELECT descriptor FROM catalog_models WHERE role = 'learned'") else { return nil }
        return try? JSONDecoder().decode(EmbeddingDescriptor.self, from: Data(text.utf8))
    }

    /// Records what makes the learned vectors; moves the version when it changes.
    public func recordLearnedModel(_ descriptor: EmbeddingDescriptor) async throws(CatalogStoreError) {
        try await write { db in
            guard try SQLiteCatalogStore.learnedModel(db) != descriptor else { return }
            let text = String(decoding: try JSONEncoder().encode(descriptor), as: UTF8.self)
            try db.execute(sql: "INSERT INTO catalog_models (role, descriptor) VALUES ('learned', ?) ON CONFLICT (role) DO UPDATE SET descriptor = excluded.descriptor",
                           arguments: [text])
            try SQLiteCatalogStore.bumpVersion(db)
            try SQLiteCatalogStore.resetChanges(db)
        }
    }

    /// `PRAGMA integrity_check` ("ok" when healthy).
    public func integrityCheck() async throws(CatalogStoreError) -> String {
        try await read { db in try String.fetchOne(db, sql: "PRAGMA integrity_check") ?? "no answer" }
    }

    /// Every image with its metadata, for `vsearch catalog export`.
    public func export() async throws(CatalogStoreError) -> [ExportedImage] {
        try await read { db in
            var values: [Int64: [String: String]] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT image_id, field, text_value FROM image_values") {
                values[row["image_id"], default: [:]][row["field"]] = row["text_value"]
            }
            return try Row.fetchAll(db, sql: "SELECT id, im_name, source, width, height FROM images ORDER BY im_name").map { row in
                ExportedImage(imageName: row["im_name"], source: row["source"], width: row["width"], height: row["height"],
                              metadata: values[row["id"]] ?? [:])
            }
        }
    }

    // MARK: - Access with typed errors

    /// A read on one of GRDB's reader threads, awaited: the caller's thread is never held.
    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(CatalogStoreError) -> T {
        do { return try await pooledRead(body) } catch { throw SQLiteCatalogStore.wrap(error) }
    }

    /// A write transaction on GRDB's writer thread, awaited.
    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(CatalogStoreError) -> T {
        do { return try await pooledWrite(body) } catch { throw SQLiteCatalogStore.wrap(error) }
    }

    /// GRDB's async read on one of its reader threads, run to its end
    /// whatever becomes of the caller's task, as writes are (``pooledWrite(_:)``):
    /// an indexer cancelled between batches still reads the catalog's count
    /// after the batch it committed — a CI run caught a cancelled insert
    /// whose saved progress missed a committed batch when this read gave up.
    func pooledRead<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        let reader = self.reader
        return try await Task.detached { try await reader.read(body) }.value
    }

    /// GRDB's async write transaction, run to its end whatever becomes of the
    /// caller's task. GRDB's async access gives up when its task is cancelled;
    /// the store's contract for writes is the synchronous one — a write made
    /// is carried out — so that, say, an insert transaction cancelled as the
    /// server stops still saves its last progress. The write runs in a task of
    /// its own, awaited.
    func pooledWrite<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        if isSnapshot { throw CatalogStoreError.readOnlySnapshot(location: path) }
        let pool = self.pool
        return try await Task.detached { try await pool.write(body) }.value
    }

    static func wrap(_ error: any Error) -> CatalogStoreError {
        if let error = error as? CatalogStoreError { return error }
        if let error = error as? DatabaseError {
            return .statement(reason: error.message ?? "\(error.resultCode)", sql: error.sql)
        }
        return .statement(reason: "\(error)", sql: nil)
    }
}
