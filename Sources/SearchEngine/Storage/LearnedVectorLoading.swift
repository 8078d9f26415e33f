/// Which learned vectors ``CatalogStore/loadIndex(learned:)`` loads.
public enum LearnedVectorLoading: Sendable, Hashable {
    /// None: a colour-only index.
    case none
    /// In their `Int8` form (``QuantizedMatrix``): what an engine searches.
    case compact
    /// Exactly as stored too (a catalog copy writes them).
    case exact
}
