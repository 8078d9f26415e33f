/// How the offline engine finds a query's nearest images: by scanning every
/// candidate, or through an approximate (HNSW) index.
///
/// - ``exact``: every image the filters leave is scored (recall 1; the cost
///   grows with the catalog);
/// - ``approximate``: the HNSW index chooses the candidates (the embedded
///   store's in-process index, or PostgreSQL's pgvector index), filtered
///   pages filled by widening the search; the chosen ones are scored exactly;
/// - ``auto``: exact for small catalogs and scopes, selective filters, score
///   ranges and deep pages; the index otherwise.
///
/// A catalog has a default (`--knn` on the command line; `knn=` in a
/// PostgreSQL URL); a request may name its own with the extra query parameter
/// `knn` (and `ef_search`), which the hosted APIs do not have.
public enum NearestNeighbourMode: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    case auto
    case exact
    case approximate

    /// Parses a wire or command-line value.
    /// - Throws: ``VisualSearchError/invalidParameter(name:reason:)`` naming `knn`.
    public init(parsing text: String) throws(VisualSearchError) {
        guard let mode = NearestNeighbourMode(rawValue: text.lowercased()) else {
            throw .invalidParameter(name: "knn", reason: "\"\(CatalogText.visible(text.prefix(40)))\" is not one of "
                                    + NearestNeighbourMode.allCases.map(\.rawValue).joined(separator: ", "))
        }
        self = mode
    }

    public var description: String { rawValue }
}
