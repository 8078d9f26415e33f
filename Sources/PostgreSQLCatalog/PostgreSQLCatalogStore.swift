import SearchEngine
import Foundation
import Logging
import NIOSSL
import PostgresNIO
import Synchronization
import VisualSearch

/// The scale-out catalog store: PostgreSQL with the pgvector extension,
/// through PostgresNIO's connection pool.
///
/// Tables (``PostgreSQLMigrations``, in the URL's `schema`, `public` by default):
/// - `images`: `id`, `im_name` (unique), `source`, size, `content_hash`,
///   `features vector(112)` with an HNSW index (L2, the score's distance),
///   `palette` (JSONB), timestamps;
/// - `fields`: the declared schema;
/// - `image_values`: one row per image and field — `text_value` (B-tree,
///   with the field), `number_value` (B-tree), `words` (a `tsvector` of the
///   folded words of `text` fields, GIN): what `fq` and facets read;
/// - `catalog_state`: the version counter every process polls;
/// - `tracking_events`: the collector's events, unique by event id.
///
/// Every write is one transaction, so a killed indexer leaves whole batches
/// and several indexers on different machines can write at once (batches
/// lock their rows in `im_name` order, so they never deadlock). A statement
/// that cannot get a connection within `connect_timeout` fails with
/// ``CatalogStoreError/unavailable(location:reason:)`` (HTTP 503), and the
/// pool reconnects by itself once the server is back.
///
/// ```swift
/// let settings = try PostgreSQLSettings(url: "postgresql://vsearch@db:5432/shop")
/// try await PostgreSQLCatalogStore.withStore(settings, creating: true) { store in
///     try await store.upsert(items, schema: schema)
/// }   // the pool is closed here
/// ```
///
/// The connection pool lives as long as the scope that owns it
/// (``withStore(_:creating:_:)``): PostgresNIO's rule that whoever owns a
/// `PostgresClient` runs its `run()`. A server opens its catalog in that
/// scope and serves inside it, so the pool outlives the last request.
public final class PostgreSQLCatalogStore: CatalogStore, Sendable {
    /// Where the catalog is, and how it is queried.
    public let settings: PostgreSQLSettings
    public var location: String { settings.description }
    let client: PostgresClient
    /// A snapshot's one connection, inside its `REPEATABLE READ` transaction
    /// (``withSnapshot(_:)``): every read goes there, writes are refused.
    let pinned: PostgresConnection?
    let logger: Logger

    /// Runs `body` with the catalog `settings` names, its connection pool
    /// running in a child task of this scope for exactly as long as `body`
    /// does (closed when it returns or throws; a later call on the store
    /// fails as unavailable). Connects, checks the pgvector extension and the
    /// catalog's tables, and migrates them first. With `creating`
    /// (`vsearch index`, `catalog migrate`, the vector-loading debug
    /// commands), makes the schema, the extension and the tables when missing.
    /// - Throws: ``CatalogStoreError/unavailable(location:reason:)`` when the
    ///   server cannot be reached, ``CatalogStoreError/notFound(location:)``
    ///   for a database without a catalog, ``CatalogStoreError/unusable(location:reason:)``
    ///   for a missing extension or privilege, naming the fix; and what `body` throws.
    public static func withStore<Result>(_ settings: PostgreSQLSettings, creating: Bool = false,
                                         _ body: (PostgreSQLCatalogStore) async throws -> Result) async throws -> Result {
        let store = PostgreSQLCatalogStore(settings: settings)
        return try await withThrowingTaskGroup(of: Void.self, returning: Result.self) { group in
            group.addTask { await store.client.run() }
            defer { group.cancelAll() }
            try await store.prepare(creating: creating)
            return try await body(store)
        }
    }

    /// A store whose pool nobody runs yet: ``withStore(_:creating:_:)`` runs it.
    private init(settings: PostgreSQLSettings) {
        self.settings = settings
        var logger = Logger(label: "vsearch.postgresql")
        logger.logLevel = .critical  // the pool's own messages; failures reach callers as typed errors
        self.logger = logger
        var configuration = PostgresClient.Configuration(host: settings.host, port: settings.port, username: settings.user,
                                                         password: settings.password, database: settings.database,
                                                         tls: Self.tls(settings.tls))
        configuration.options.connectTimeout = .milliseconds(Int64(settings.connectTimeout * 1000))
        configuration.options.maximumConnections = settings.poolSize
        configuration.options.additionalStartupParameters = [
            ("search_path", "\(settings.quotedSchema), public"),
            ("application_name", settings.applicationName),
            // k-NN settings for the whole session (pgvector validates them when it loads): no
            // statement per query. The iterative scan keeps filtered and deep pages full.
            ("hnsw.ef_search", String(settings.efSearch)),
            ("hnsw.iterative_scan", "relaxed_order"),
        ]
        client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        pinned = nil
    }

    /// A store reading through `connection` only (a snapshot), on `store`'s pool.
    init(snapshotOf store: PostgreSQLCatalogStore, connection: PostgresConnection) {
        settings = store.settings
        client = store.client
        logger = store.logger
        pinned = connection
    }

    static func tls(_ mode: PostgreSQLSettings.TLSMode) -> PostgresClient.Configuration.TLS {
        var configuration = TLSConfiguration.makeClientConfiguration()
        switch mode {
        case .disable: return .disable
        case .allow, .prefer:
            configuration.certificateVerification = .none
            return .prefer(configuration)
        case .require:
            configuration.certificateVerification = .none
            return .require(configuration)
        case .verifyCA:
            configuration.certificateVerification = .noHostnameVerification
            return .require(configuration)
        case .verifyFull:
            return .require(configuration)
        }
    }

    // MARK: - Opening

    func prepare(creating: Bool) async throws(CatalogStoreError) {
        let settings = settings
        let state = try await withConnection { connection in
            try await Self.catalogState(connection, settings: settings)
        }
        if state.migrated == PostgreSQLMigrations.steps.count { return }
        if state.migrated == 0 && !creating {
            if state.hasForeignImagesTable {
                throw .unusable(location: location, reason: "schema \(settings.schema) has an images table that vsearch did not make; choose another ?schema=")
            }
            throw .notFound(location: location)
        }
        try await ensureVectorExtension(state.vectorSchema)
        if let version = state.vectorVersion, !Self.hasIterativeScans(version) {
            throw .unusable(location: location, reason: "pgvector \(version) is older than 0.8, which filtered k-NN needs (iterative index "
                           + "scans); as its owner run: ALTER EXTENSION vector UPDATE; (after installing pgvector 0.8 or later on the server)")
        }
        try await migrate()
    }

    struct CatalogState: Sendable {
        var migrated: Int
        var hasForeignImagesTable: Bool
        /// Where pgvector is installed; nil when it is not.
        var vectorSchema: String?
        /// Its version ("0.8.0"); nil when it is not installed.
        var vectorVersion: String?
    }

    static func catalogState(_ connection: PostgresConnection, settings: PostgreSQLSettings) async throws -> CatalogState {
        let rows = try await connection.query("""
            SELECT to_regclass(format('%I.vsearch_migrations', \(settings.schema)::text)) IS NOT NULL,
                   to_regclass(format('%I.images', \(settings.schema)::text)) IS NOT NULL,
                   (SELECT n.nspname::text FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'vector'),
                   (SELECT extversion::text FROM pg_extension WHERE extname = 'vector')
            """, logger: Self.silent)
        var hasMigrations = false, hasImages = false, vectorSchema: String?, vectorVersion: String?
        for try await (migrations, images, schema, version) in rows.decode((Bool, Bool, String?, String?).self) {
            hasMigrations = migrations
            hasImages = images
            vectorSchema = schema
            vectorVersion = version
        }
        var migrated = 0
        if hasMigrations {
            let names = try await connection.query("SELECT name FROM vsearch_migrations", logger: Self.silent)
            var applied: Set<String> = []
            for try await name in names.decode(String.self) { applied.insert(name) }
            migrated = PostgreSQLMigrations.steps.prefix { applied.contains($0.name) }.count
        }
        return CatalogState(migrated: migrated, hasForeignImagesTable: hasImages && !hasMigrations, vectorSchema: vectorSchema,
                            vectorVersion: vectorVersion)
    }

    /// Whether a pgvector version ("0.8.0", "0.10.1") has iterative index scans (0.8 and later).
    static func hasIterativeScans(_ version: String) -> Bool {
        let parts = version.split(separator: ".").map { Int($0) ?? 0 }
        return (parts.first ?? 0, parts.dropFirst().first ?? 0) >= (0, 8)
    }

    func ensureVectorExtension(_ installedIn: String?) async throws(CatalogStoreError) {
        if let installedIn {
            guard installedIn == "public" || installedIn == settings.schema else {
                throw .unusable(location: location, reason: "pgvector is installed in schema \(installedIn), which vsearch does not search; "
                               + "run ALTER EXTENSION vector SET SCHEMA public (as its owner)")
            }
            return
        }
        do {
            _ = try await withConnection { connection in
                try await connection.query("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public", logger: Self.silent)
            }
        } catch {
            switch error {
            case .unavailable: throw error
            default:
                throw .unusable(location: location, reason: "the pgvector extension is not installed in database \(settings.database) and "
                               + "this user cannot install it (\(error.description)); as a superuser or the database owner run: "
                               + "CREATE EXTENSION vector; (the server needs pgvector 0.8 or later: https://github.com/pgvector/pgvector)")
            }
        }
    }

    /// Applies the missing steps, each in a transaction under an advisory
    /// lock keyed by the schema, so concurrent openers migrate once.
    func migrate() async throws(CatalogStoreError) {
        let settings = settings
        try await withTransaction { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(hashtext('vsearch migrate ' || \(settings.schema)))", logger: Self.silent)
            try await connection.query(PostgresQuery(unsafeSQL: "CREATE SCHEMA IF NOT EXISTS \(settings.quotedSchema)"), logger: Self.silent)
            try await connection.query("""
                CREATE TABLE IF NOT EXISTS vsearch_migrations (name TEXT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())
                """, logger: Self.silent)
            var applied: Set<String> = []
            for try await name in try await connection.query("SELECT name FROM vsearch_migrations", logger: Self.silent).decode(String.self) {
                applied.insert(name)
            }
            for step in PostgreSQLMigrations.steps where !applied.contains(step.name) {
                for statement in step.sql {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: Self.silent)
                }
                try await connection.query("INSERT INTO vsearch_migrations (name) VALUES (\(step.name))", logger: Self.silent)
            }
        }
    }

    // MARK: - Access with typed errors

    static let silent = Logger(label: "vsearch.postgresql.query", factory: { _ in SwiftLogNoOpLogHandler() })

    /// Runs `body` on a pooled connection. Waiting for the connection is
    /// bounded by `connect_timeout` (the pool alone would wait a minute); the
    /// statement itself is not.
    func withConnection<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws(CatalogStoreError) -> T {
        let client = client, location = location
        if let pinned {
            do { return try await body(pinned) } catch { throw Self.wrap(error, location: location) }
        }
        let timeout = Duration.milliseconds(Int64(settings.connectTimeout * 1000))
        let leased = LeaseFlag()
        do {
            return try await withThrowingTaskGroup(of: T?.self) { group in
                group.addTask {
                    try await client.withConnection { connection in
                        leased.set()
                        return try await body(connection)
                    }
                }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    if !leased.isSet {
                        throw CatalogStoreError.unavailable(location: location, reason: "no connection within \(timeout) (is the server up?)")
                    }
                    return nil
                }
                while let next = try await group.next() {
                    if let value = next {
                        group.cancelAll()
                        return value
                    }
                }
                throw CatalogStoreError.unavailable(location: location, reason: "the query was cancelled")
            }
        } catch {
            throw Self.wrap(error, location: location)
        }
    }

    /// Runs `body` in one transaction: committed when it returns, rolled back when it throws.
    func withTransaction<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws(CatalogStoreError) -> T {
        if pinned != nil { throw .readOnlySnapshot(location: location) }
        let logger = Self.silent
        return try await withConnection { connection in
            try await connection.withTransaction(logger: logger) { connection in try await body(connection) }
        }
    }

    /// A PostgreSQL or pool failure as a typed error: the server's message
    /// and SQLSTATE, the statement (its values are always bound, never in
    /// the text); connection failures become ``CatalogStoreError/unavailable(location:reason:)``.
    static func wrap(_ error: any Error, location: String) -> CatalogStoreError {
        if let error = error as? CatalogStoreError { return error }
        if let error = error as? PostgresTransactionError,
           let cause = error.closureError ?? error.beginError ?? error.commitError ?? error.rollbackError {
            return wrap(cause, location: location)
        }
        if error is CancellationError { return .unavailable(location: location, reason: "the query was cancelled") }
        if let error = error as? PSQLError {
            if error.code == .server {
                let state = error.serverInfo?[.sqlState] ?? ""
                let message = error.serverInfo?[.message] ?? "server error"
                // 08: connection exception; 57P01-57P03: shutting down or starting up; 53300: too many connections.
                if state.hasPrefix("08") || state.hasPrefix("57P") || state == "53300" {
                    return .unavailable(location: location, reason: "\(message) (SQLSTATE \(state))")
                }
                if state.hasPrefix("28") {  // invalid authorization: the URL's user or password
                    return .unusable(location: location, reason: "\(message); check the user and the password (URL, $PGPASSWORD or ~/.pgpass)")
                }
                if state == "3D000" {
                    return .unusable(location: location, reason: "\(message); create it first (createdb, or CREATE DATABASE)")
                }
                let detail = error.serverInfo?[.detail].map { " — \($0)" } ?? ""
                return .statement(reason: "\(message)\(detail) (SQLSTATE \(state))", sql: error.query?.sql)
            }
            return .unavailable(location: location, reason: Self.describe(error.code))
        }
        return .unavailable(location: location, reason: "\(type(of: error)): \(error)")
    }

    static func describe(_ code: PSQLError.Code) -> String {
        switch code {
        case .connectionError: "cannot connect"
        case .serverClosedConnection, .uncleanShutdown: "the server closed the connection"
        case .clientClosedConnection, .poolClosed: "the connection pool is closed"
        case .authMechanismRequiresPassword: "the server wants a password: put it in the URL, $PGPASSWORD or ~/.pgpass"
        case .sslUnsupported: "the server does not offer TLS (sslmode=require); use sslmode=prefer or disable, or enable ssl on the server"
        case .queryCancelled: "the query was cancelled"
        default: "\(code)"
        }
    }
}

/// Set once a connection has been leased, so the lease deadline stops counting.
final class LeaseFlag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}
