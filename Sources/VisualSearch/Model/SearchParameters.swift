/// The parameters every ViSearch query shares, with their wire semantics.
///
/// ```swift
/// var parameters = SearchParameters()
/// parameters.limit = 20
/// parameters.filters = [try Filter(parsing: "brand:nike")]
/// parameters.facets = ["brand", "price"]
/// parameters.includesScore = true
/// ```
public struct SearchParameters: Sendable, Hashable, Codable {
    /// The largest `limit` accepted: 1000. (The hosted service documents 100.)
    public static let maximumLimit = 1000

    /// Page number, from 1. 1 by default.
    public var page: Int = 1
    /// Results per page, 1...``maximumLimit``. 10 by default.
    public var limit: Int = 10
    /// Metadata fields to return in `value_map` (`fl`). None by default.
    public var fields: [String] = []
    /// Return every metadata field (`get_all_fl`). `false` by default.
    public var returnsAllFields = false
    /// Filters (`fq`), combined with AND. None by default.
    public var filters: [Filter] = []
    /// Include `score` in results (`score`). `false` by default.
    public var includesScore = false
    /// Keep results scoring at least this (`score_min`), 0...1. `nil` (no minimum) by default.
    public var scoreMin: Float?
    /// Keep results scoring at most this (`score_max`), 0...1. `nil` (no maximum) by default.
    public var scoreMax: Float?
    /// Fields to facet on (`facets`); `["*"]` means every field. None by default.
    public var facets: [String] = []
    /// Values per string facet (`facets_limit`). 10 by default.
    public var facetsLimit = 10
    /// Include counts in string facets (`facets_show_count`). `false` by default.
    public var facetsShowCount = false
    /// Drop near-duplicate results (`dedup`). `false` by default. Dedup looks
    /// at the results around the requested page, so the response's `total`
    /// counts matches before any is dropped.
    public var deduplicates = false
    /// Two results are duplicates when their similarity is at least this
    /// (`dedup_score_threshold`). 0.98 by default.
    public var dedupScoreThreshold: Float = 0.98
    /// Accepted for compatibility (`detection`); the offline engine has no
    /// object detector and answers with empty `product_types`. `nil` by default.
    public var detection: String?
    /// Which similarity ranks the results (`similarity`, an extension of the
    /// offline engine: the hosted APIs have no such parameter). `nil` — the
    /// engine's default, ``SimilarityMode`` says which — by default.
    public var similarity: SimilarityMode?
    /// How the nearest images are found for this request (`knn`, an extension
    /// of the offline engine). `nil` — the catalog's setting — by default.
    public var nearestNeighbours: NearestNeighbourMode?
    /// The candidates an approximate search keeps while walking the index
    /// (`ef_search`, an extension of the offline engine): more is slower and
    /// nearer to exact. `nil` — the catalog's setting — by default.
    public var efSearch: Int?

    /// Creates the defaults.
    public init() {}

    /// The largest `ef_search` a request may ask for (pgvector's limit too).
    public static let maximumEFSearch = 1000

    /// The most `fq` filters one request may carry: 100 (each becomes a
    /// condition of the store's query; a thousand overflowed SQLite's expression tree).
    public static let maximumFilters = 100

    /// Checks ranges, the number of filters and the characters of names and values (``CatalogText``).
    /// - Throws: ``VisualSearchError/invalidParameter(name:reason:)``.
    public func validate() throws(VisualSearchError) {
        guard filters.count <= Self.maximumFilters else {
            throw .invalidParameter(name: "fq", reason: "\(filters.count) filters is over the limit of \(Self.maximumFilters) per request")
        }
        for filter in filters {
            try CatalogText.validateName(filter.field, parameter: "fq")
            try CatalogText.validateValue(filter.value, parameter: "fq")
        }
        for field in fields { try CatalogText.validateName(field, parameter: "fl") }
        for field in facets { try CatalogText.validateName(field, parameter: "facets") }
        guard page >= 1 else { throw .invalidParameter(name: "page", reason: "\(page) is below 1 (pages start at 1)") }
        guard (1...SearchParameters.maximumLimit).contains(limit) else {
            throw .invalidParameter(name: "limit", reason: "\(limit) is not in 1...\(SearchParameters.maximumLimit)")
        }
        for (name, value) in [("score_min", scoreMin), ("score_max", scoreMax)] {
            if let value, !(value.isFinite && (0...1).contains(value)) {
                throw .invalidParameter(name: name, reason: "\(value) is not in 0...1")
            }
        }
        if let scoreMin, let scoreMax, scoreMin > scoreMax {
            throw .invalidParameter(name: "score_min", reason: "\(scoreMin) is above score_max \(scoreMax)")
        }
        guard facetsLimit >= 1 else { throw .invalidParameter(name: "facets_limit", reason: "\(facetsLimit) is below 1") }
        guard (0...1).contains(dedupScoreThreshold) else {
            throw .invalidParameter(name: "dedup_score_threshold", reason: "\(dedupScoreThreshold) is not in 0...1")
        }
        if let efSearch, !(1...Self.maximumEFSearch).contains(efSearch) {
            throw .invalidParameter(name: "ef_search", reason: "\(efSearch) is not in 1...\(Self.maximumEFSearch)")
        }
    }
}
