/// What changed in a catalog's images after a version: what an engine applies
/// to its in-memory index (``FeatureIndex/applying(_:)``) instead of reading
/// every row again when the catalog's version moves.
public struct CatalogChanges: Sendable {
    /// The catalog's version the changes bring an index to.
    public var version: Int
    /// The images added or changed, as ``CatalogReader/loadIndex(ids:)`` loads them.
    public var rows: FeatureIndex
    /// The ids of images removed (and not added again).
    public var removed: [Int64]

    public init(version: Int, rows: FeatureIndex, removed: [Int64]) {
        self.version = version
        self.rows = rows
        self.removed = removed
    }

    /// How many images the changes touch.
    public var count: Int { rows.count + removed.count }
}
