import SearchEngine
import ServiceLifecycle
import Tracking
import VisualSearch

/// A catalog as ``CatalogLocation/openCatalog(creating:)`` opened it: the
/// store in every role, and what whoever composes an engine or a server
/// needs to know of it — the one place that knows which store does what.
public struct OpenedCatalog: Sendable {
    /// The catalog, its insert journal and its collector.
    public let store: any CatalogStore & CollectorStore
    /// Where an engine finds candidates: in memory (SQLite) or in the store (PostgreSQL's k-NN).
    public let candidates: CandidateSource
    /// Where uploads are cached by default: beside a SQLite file; nil (a temporary folder) otherwise.
    public let queryCacheDirectory: String?
    /// What a server's `ServiceGroup` runs after its application, so they
    /// stop after the last request: the PostgreSQL pool.
    public let services: [any Service]

    public init(store: any CatalogStore & CollectorStore, candidates: CandidateSource, queryCacheDirectory: String?,
                services: [any Service]) {
        self.store = store
        self.candidates = candidates
        self.queryCacheDirectory = queryCacheDirectory
        self.services = services
    }

    /// An engine over this catalog: its store as catalog, journal and collector.
    public func engine(configuration: VisualSearchEngine.Configuration = VisualSearchEngine.Configuration())
        async throws(VisualSearchError) -> VisualSearchEngine {
        var configuration = configuration
        if configuration.queryCacheDirectory == nil { configuration.queryCacheDirectory = queryCacheDirectory }
        return try await VisualSearchEngine(catalog: store, journal: store, candidates: candidates, engagement: store,
                                            configuration: configuration)
    }
}
