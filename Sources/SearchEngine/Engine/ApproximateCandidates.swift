import VisualSearch

extension VisualSearchEngine {
    /// The rows the HNSW graphs (``ApproximateIndex``) find nearest `query` —
    /// each region's vectors in each space its mode scores (`fused`: both
    /// spaces, the union re-scored), the items events boost beside them —
    /// among `filtered` (every row when nil), without the excluded image;
    /// enough for the requested page and the ties at its edge. Nil when the
    /// query scans exactly: the settings (with the request's `knn` and
    /// `ef_search`) say so (``NearestNeighbourSettings/scansExactly(wanted:matching:catalogSize:scoreRange:)``),
    /// a space it needs has no graph, or a filter leaves too few of the
    /// widest search's candidates to fill the page.
    func approximateRows(for query: QueryVectors, excluding: CatalogImage?, parameters: SearchParameters, index: FeatureIndex,
                         filtered: FilteredScope?, blend: BlendTerms?) -> [Int]? {
        guard let approximate else { return nil }
        let settings = configuration.nearestNeighbours.overridden(by: parameters)
        let matching = filtered?.rows.count ?? index.count
        let ranking = Ranking(parameters: parameters)
        let wanted = min(matching, ranking.kept(of: matching) + Self.tieMargin)
        let scoreRange = parameters.scoreMin != nil || parameters.scoreMax != nil
        guard !settings.scansExactly(wanted: wanted, matching: matching, catalogSize: index.count, scoreRange: scoreRange) else { return nil }
        let spaces: [(VectorSpace, [[Float]])] = switch query.mode {
        case .color: [(.color, query.color)]
        case .visual: [(.learned, query.learned)]
        case .fused: [(.color, query.color), (.learned, query.learned)]
        }
        let graphs = approximate.graphs
        guard spaces.allSatisfy({ graphs[$0.0] != nil }) else { return nil }
        guard ranking.skipped < matching, wanted > 0 else { return [] }
        let allowed = filtered?.set
        var seen = Set<Int>()
        var rows: [Int] = []
        for (space, vectors) in spaces {
            for vector in vectors {
                guard let found = approximate.candidates(for: vector, space: space, wanted: wanted, ef: settings.efSearch, index: index,
                                                         allowed: allowed, excluding: excluding?.row) else { return nil }
                for row in found where seen.insert(row).inserted { rows.append(row) }
            }
        }
        // Every other candidate's blended score is its visual score times one factor: the nearest still hold the page.
        for name in blend?.boosts.keys.sorted() ?? [] {
            guard let row = index.row(named: name), row != excluding?.row, allowed?.contains(row) ?? true else { continue }
            if seen.insert(row).inserted { rows.append(row) }
        }
        return rows
    }
}
