import PostgreSQLCatalog
import SQLiteCatalog
import SearchEngine
import Tracking
import VisualSearch

/// A catalog as ``CatalogLocation/withCatalog(creating:_:)`` opened it: the
/// store in every role, and what whoever composes an engine or a server
/// needs to know of it — the one place that knows which store does what.
public struct OpenedCatalog: Sendable {
    /// The catalog, its insert journal and its collector.
    public let store: any CatalogStore & CollectorStore
    /// Where an engine finds candidates: in memory (SQLite) or in the store (PostgreSQL's k-NN).
    public let candidates: CandidateSource
    /// Where uploads are cached by default: beside a SQLite file; nil (a temporary folder) otherwise.
    public let queryCacheDirectory: String?
    /// Where an in-memory catalog's HNSW graphs are saved: beside a SQLite file; nil for a store running k-NN itself.
    public let graphFiles: GraphFiles?
    /// How the store backs itself up (`vsearch catalog backup`); nil when it cannot.
    public let backup: (any CatalogBackup)?
    /// How the store holds one state of the catalog for a series of reads (`vsearch catalog migrate`); nil when it cannot.
    public let snapshots: (any CatalogSnapshots)?

    public init(store: any CatalogStore & CollectorStore, candidates: CandidateSource, queryCacheDirectory: String?,
                graphFiles: GraphFiles? = nil, backup: (any CatalogBackup)? = nil,
                snapshots: (any CatalogSnapshots)? = nil) {
        self.store = store
        self.candidates = candidates
        self.queryCacheDirectory = queryCacheDirectory
        self.graphFiles = graphFiles
        self.backup = backup
        self.snapshots = snapshots
    }

    /// A SQLite catalog: the file is the catalog, its insert journal and its
    /// collector; candidates are scored in memory; uploads are cached and HNSW
    /// graphs saved beside the file.
    public init(sqlite store: SQLiteCatalogStore) {
        self.init(store: store, candidates: .inMemory, queryCacheDirectory: store.queryCacheDirectory,
                  graphFiles: store.graphFiles, backup: store, snapshots: store)
    }

    /// A PostgreSQL catalog: the database is the catalog, its insert journal
    /// and its collector, and runs the k-NN stage itself
    /// (``CandidateSource/store(_:)``): an engine holds no vectors. Its
    /// connection pool runs in the scope that opened it (``PostgreSQLCatalogStore/withStore(_:creating:_:)``).
    public init(postgreSQL store: PostgreSQLCatalogStore) {
        self.init(store: store, candidates: .store(store), queryCacheDirectory: nil,
                  backup: store, snapshots: store)
    }

    /// Runs `body` with one state of the catalog held for all its reads
    /// (``CatalogSnapshots``), or with the store itself when it holds none.
    public func withSnapshot<T: Sendable>(_ body: @escaping @Sendable (any CatalogStore & CollectorStore) async throws(CatalogStoreError) -> T)
        async throws(CatalogStoreError) -> T {
        guard let snapshots else { return try await body(store) }
        return try await snapshots.withSnapshot(body)
    }

    /// An engine over this catalog: its store as catalog, journal and
    /// collector — the one place an engine is built from a store. Uploads are
    /// cached and graphs saved where the store says unless `configuration` says where.
    public func engine(configuration: VisualSearchEngine.Configuration = VisualSearchEngine.Configuration())
        async throws(VisualSearchError) -> VisualSearchEngine {
        var configuration = configuration
        if configuration.queryCacheDirectory == nil { configuration.queryCacheDirectory = queryCacheDirectory }
        if configuration.graphFiles == nil { configuration.graphFiles = graphFiles }
        return try await VisualSearchEngine(catalog: store, journal: store, candidates: candidates, engagement: store,
                                            configuration: configuration)
    }
}
