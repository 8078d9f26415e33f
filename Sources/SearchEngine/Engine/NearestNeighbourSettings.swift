import VisualSearch

/// How an engine on an in-memory catalog (``CandidateSource/inMemory``)
/// finds a query's nearest images — the embedded store's counterpart of a
/// PostgreSQL URL's `knn`, `ef_search` and `exact_below`, with the same
/// meanings. A request may override `mode` and `efSearch` (`knn`,
/// `ef_search`: ``SearchParameters/nearestNeighbours``, ``SearchParameters/efSearch``).
///
/// - `mode` (default ``NearestNeighbourMode/auto``): `exact` scans every
///   image the filters leave (recall 1, what the engine did before it had
///   an index); `approximate` lets the HNSW graph (``ApproximateIndex``)
///   choose the candidates and scores those exactly; `auto` scans exactly a
///   catalog or filtered scope of at most `exactBelow` images, a score range
///   (its `total` needs every score), a page deeper than ``approximateDepth``
///   results, or a filter so selective that the graph would have to be
///   walked past ``ApproximateIndex/widestSearch`` candidates to fill the page;
///   the graph otherwise.
/// - `efSearch` (default 100): the candidates an approximate search keeps
///   (hnswlib's `ef`); a filter widens it by the share of images it keeps.
///   More is slower and nearer exact: bench/RESULTS.md, issue 29, measures it.
/// - `exactBelow` (default 1000): see `auto`.
public struct NearestNeighbourSettings: Sendable, Hashable {
    public var mode: NearestNeighbourMode = .auto
    public var efSearch = 100
    public var exactBelow = 1000

    /// The deepest result `auto` lets the graph serve; deeper pages scan exactly.
    public static let approximateDepth = 1000

    public init(mode: NearestNeighbourMode = .auto, efSearch: Int = 100, exactBelow: Int = 1000) {
        self.mode = mode
        self.efSearch = efSearch
        self.exactBelow = exactBelow
    }

    /// These settings with a request's own `knn` and `ef_search`.
    public func overridden(by parameters: SearchParameters) -> NearestNeighbourSettings {
        var settings = self
        if let mode = parameters.nearestNeighbours { settings.mode = mode }
        if let efSearch = parameters.efSearch { settings.efSearch = efSearch }
        return settings
    }

    /// Whether a query wanting `wanted` results over a scope of `matching` of
    /// the catalog's `catalogSize` images scans exactly (see the type's note).
    public func scansExactly(wanted: Int, matching: Int, catalogSize: Int, scoreRange: Bool) -> Bool {
        switch mode {
        case .exact: return true
        case .approximate: return scoreRange
        case .auto:
            if scoreRange || wanted > Self.approximateDepth || matching <= exactBelow || catalogSize <= exactBelow { return true }
            let share = Double(matching) / Double(max(1, catalogSize))
            return Double(wanted) / share * 1.5 > Double(ApproximateIndex.widestSearch)
        }
    }
}
