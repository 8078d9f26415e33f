import Foundation
import SearchEngine
import VisualSearch

extension SQLiteCatalogStore {
    /// Where an engine on this catalog caches uploaded query images for
    /// `im_id`: `query-cache` beside the file.
    public var queryCacheDirectory: String {
        ((path as NSString).deletingLastPathComponent as NSString).appendingPathComponent("query-cache")
    }
}

extension VisualSearchEngine {
    /// An engine on a SQLite catalog: the file is its catalog, its insert
    /// journal and its collector; candidates are scored in memory; uploads
    /// are cached beside the file unless `configuration` says where.
    public convenience init(store: SQLiteCatalogStore, configuration: Configuration = Configuration()) async throws(VisualSearchError) {
        var configuration = configuration
        if configuration.queryCacheDirectory == nil { configuration.queryCacheDirectory = store.queryCacheDirectory }
        try await self.init(catalog: store, journal: store, candidates: .inMemory, engagement: store, configuration: configuration)
    }
}
