import Foundation
import SearchEngine
import VisualSearch

extension SQLiteCatalogStore {
    /// Where an engine on this catalog caches uploaded query images for
    /// `im_id`: `query-cache` beside the file.
    public var queryCacheDirectory: String {
        ((path as NSString).deletingLastPathComponent as NSString).appendingPathComponent("query-cache")
    }

    /// Where an engine on this catalog saves its HNSW graphs: `FILE.hnsw/` beside the file.
    public var graphFiles: GraphFiles { GraphFiles(besideCatalog: path) }
}

extension VisualSearchEngine {
    /// An engine on a SQLite catalog: the file is its catalog, its insert
    /// journal and its collector; candidates are scored in memory; uploads
    /// are cached and HNSW graphs saved beside the file unless `configuration` says where.
    public convenience init(store: SQLiteCatalogStore, configuration: Configuration = Configuration()) async throws(VisualSearchError) {
        var configuration = configuration
        if configuration.queryCacheDirectory == nil { configuration.queryCacheDirectory = store.queryCacheDirectory }
        if configuration.graphFiles == nil { configuration.graphFiles = store.graphFiles }
        try await self.init(catalog: store, journal: store, candidates: .inMemory, engagement: store, configuration: configuration)
    }
}
