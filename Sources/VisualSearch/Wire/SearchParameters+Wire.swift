import Foundation

/// The one place that maps ``SearchParameters`` to and from wire names.
///
/// ViSearch (`/search`, `/uploadsearch`, …) and ProductSearch
/// (`v1/product/…`) name the same ideas differently:
///
/// | idea | ViSearch | ProductSearch |
/// |---|---|---|
/// | filters | `fq=field:value` | `filters=field:value` (and `text_filters`) |
/// | returned fields | `fl`, `get_all_fl` | `attrs_to_get` |
///
/// Encoding follows the Swift SDK (docs/wire-protocol.md §1.6–1.7, §4.3), so a
/// request URL can be compared byte for byte with the SDK's; decoding is
/// lenient, as a server must be.
///
/// ```swift
/// var parameters = SearchParameters()
/// parameters.filters = [Filter(field: "brand", value: "nike")]
/// parameters.wireQuery(for: .viSearch).encoded
/// // "fq=brand%3Anike&get_all_fl=false&limit=10&page=1&score=false&score_max=1.000000&score_min=0.000000"
/// ```
extension SearchParameters {
    /// Which API's parameter names.
    public enum WireDialect: Sendable, Hashable {
        case viSearch
        case productSearch
    }

    /// The parameters as the SDKs send them.
    ///
    /// ViSearch, like the Swift SDK, always sends `limit`, `page`, `score`,
    /// `score_min`, `score_max` (`%f`) and `get_all_fl`; facet options only
    /// with facets. ProductSearch sends `page`, `limit` and only what is set.
    public func wireQuery(for dialect: WireDialect) -> WireQuery {
        var query = WireQuery()
        query.append("page", String(page))
        query.append("limit", String(limit))
        switch dialect {
        case .viSearch:
            query.append("score", includesScore ? "true" : "false")
            query.append("score_min", String(format: "%f", Double(scoreMin ?? 0)))
            query.append("score_max", String(format: "%f", Double(scoreMax ?? 1)))
            query.append("get_all_fl", returnsAllFields ? "true" : "false")
            query.append("fq", values: filters.map(\.description))
            query.append("fl", values: fields)
        case .productSearch:
            if includesScore { query.append("score", "true") }
            if let scoreMin { query.append("score_min", String(scoreMin)) }
            if let scoreMax { query.append("score_max", String(scoreMax)) }
            query.append("filters", values: filters.map(\.description).sorted())
            query.append("attrs_to_get", values: fields)
        }
        if !facets.isEmpty {
            query.append("facets", values: facets)
            query.append("facets_limit", String(facetsLimit))
            query.append("facets_show_count", facetsShowCount ? "true" : "false")
        }
        if deduplicates {
            query.append("dedup", "true")
            if dedupScoreThreshold != SearchParameters().dedupScoreThreshold {
                query.append("dedup_score_threshold", String(dedupScoreThreshold))
            }
        }
        if let detection { query.append("detection", detection) }
        if let similarity { query.append("similarity", similarity.rawValue) }
        if let nearestNeighbours { query.append("knn", nearestNeighbours.rawValue) }
        if let efSearch { query.append("ef_search", String(efSearch)) }
        return query
    }

    /// Reads parameters from a merged request, leniently, then validates them.
    ///
    /// Accepted beyond the Swift SDK's forms: Java's comma-joined `facets`
    /// and its `vs_fq`/`vs_fl`; Python's `True`/`False`; ProductSearch
    /// `text_filters` (matched like `filters`).
    /// - Throws: ``VisualSearchError/invalidParameter(name:reason:)`` naming the parameter.
    public init(wire query: WireQuery, dialect: WireDialect) throws(VisualSearchError) {
        self.init()
        if let page = try query.int("page") { self.page = page }
        if let limit = try query.int("limit") { self.limit = limit }
        includesScore = try query.bool("score") ?? (dialect == .productSearch)
        scoreMin = try query.float("score_min")
        scoreMax = try query.float("score_max")
        switch dialect {
        case .viSearch:
            returnsAllFields = try query.bool("get_all_fl") ?? false
            fields = query.list("fl") + query.list("vs_fl")
            filters = try (query.pairs("fq") + query.pairs("vs_fq")).map { (text) throws(VisualSearchError) in try Filter(parsing: text) }
        case .productSearch:
            fields = query.list("attrs_to_get")
            returnsAllFields = fields.isEmpty
            filters = try (query.pairs("filters") + query.pairs("text_filters")).map { (text) throws(VisualSearchError) in
                try Filter(parsing: text, parameter: "filters")
            }
        }
        facets = query.list("facets")
        if let facetsLimit = try query.int("facets_limit") { self.facetsLimit = facetsLimit }
        facetsShowCount = try query.bool("facets_show_count") ?? (dialect == .productSearch && !facets.isEmpty)
        deduplicates = try query.bool("dedup") ?? false
        if let threshold = try query.float("dedup_score_threshold") { dedupScoreThreshold = threshold }
        detection = query.string("detection")
        if let similarity = query.string("similarity"), !similarity.isEmpty { self.similarity = try SimilarityMode(parsing: similarity) }
        if let knn = query.string("knn"), !knn.isEmpty { nearestNeighbours = try NearestNeighbourMode(parsing: knn) }
        efSearch = try query.int("ef_search")
        // Swift sends score_min=0.000000 and score_max=1.000000 on every call: those are "no bound".
        if scoreMin == 0 { scoreMin = nil }
        if scoreMax == 1 { scoreMax = nil }
        try validate()
    }
}
