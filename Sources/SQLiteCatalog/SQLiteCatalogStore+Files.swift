import Foundation
import SearchEngine

extension SQLiteCatalogStore {
    /// Where an engine on this catalog caches uploaded query images for
    /// `im_id`: `query-cache` beside the file.
    public var queryCacheDirectory: String {
        ((path as NSString).deletingLastPathComponent as NSString).appendingPathComponent("query-cache")
    }

    /// Where an engine on this catalog saves its HNSW graphs: `FILE.hnsw/` beside the file.
    public var graphFiles: GraphFiles { GraphFiles(besideCatalog: path) }
}
