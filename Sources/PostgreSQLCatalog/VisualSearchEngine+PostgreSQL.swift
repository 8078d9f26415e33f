import SearchEngine
import VisualSearch

extension VisualSearchEngine {
    /// An engine on a PostgreSQL catalog: the database is its catalog, its
    /// insert journal and its collector, and runs the k-NN stage itself
    /// (``CandidateSource/store(_:)``): the engine holds no vectors.
    public convenience init(store: PostgreSQLCatalogStore, configuration: Configuration = Configuration()) async throws(VisualSearchError) {
        try await self.init(catalog: store, journal: store, candidates: .store(store), engagement: store, configuration: configuration)
    }
}
