import VisualSearch

/// A store that runs the k-NN stage itself — PostgreSQL with pgvector — so
/// an engine on it holds no vectors in memory: a replica starts at once,
/// whatever the catalog's size, and answers from the database alone.
///
/// The engine still scores, breaks ties and deduplicates in Swift over the
/// candidates the store returns (with their vectors), so a score means the
/// same on every store; what the store decides is *which* images are the
/// candidates (an exact scan or an approximate index) and how many match.
public protocol NearestNeighbourStore: CatalogReader {
    /// A catalog image's id, name, source and vectors; nil for an unknown name.
    func image(named imageName: String) async throws(CatalogStoreError) -> Neighbour?
    /// The images of `scope` among `imageNames` (unknown names and images
    /// outside the scope left out), in any order, with their vectors.
    func images(named imageNames: [String], in scope: NeighbourScope, schema: FieldSchema) async throws(CatalogStoreError) -> [Neighbour]
    /// The `count` images of `scope` nearest to `target` (all of them when
    /// fewer match), in any order, with their vectors (learned ones too when
    /// the catalog has them). `matching` is how many images the scope holds
    /// (``count(_:schema:)``) and `catalogSize` how many the catalog holds:
    /// they may decide between an exact scan and an index.
    func nearest(to target: NeighbourTarget, in scope: NeighbourScope, count: Int, matching: Int, catalogSize: Int,
                 schema: FieldSchema) async throws(CatalogStoreError) -> [Neighbour]
    /// How many images `scope` holds.
    func count(_ scope: NeighbourScope, schema: FieldSchema) async throws(CatalogStoreError) -> Int
    /// Whether the image with catalog id `id` is in `scope`.
    func contains(_ id: Int64, in scope: NeighbourScope, schema: FieldSchema) async throws(CatalogStoreError) -> Bool
    /// Facets over the images of `scope`, as ``CatalogReader/facetCounts(_:schema:ids:limit:)`` gives them.
    func facetCounts(_ fields: [String], schema: FieldSchema, scope: NeighbourScope,
                     limit: Int) async throws(CatalogStoreError) -> [FieldAggregate]
    /// Where catalog images came from; unknown names are left out.
    func sources(of imageNames: [String]) async throws(CatalogStoreError) -> [String: String]
}

/// Which images a query is over: those passing the `fq` filters, less the
/// query image of a recommendation, within a score range of the query vector.
public struct NeighbourScope: Sendable, Hashable {
    public var filters: [Filter]
    /// The catalog id never returned (the query image of a recommendation).
    public var excluding: Int64?
    /// The score range, when the request has one, and the vector it is measured from.
    public var scoreRange: ScoreRange?

    /// Scores in `minimum...maximum` from `target`, as ``Similarity`` computes them.
    public struct ScoreRange: Sendable, Hashable {
        public var target: NeighbourTarget
        public var minimum: Float
        public var maximum: Float

        public init(target: NeighbourTarget, minimum: Float, maximum: Float) {
            self.target = target
            self.minimum = minimum
            self.maximum = maximum
        }

        /// The Euclidean distances that give those scores (score = 1 − distance / 2).
        public var distances: ClosedRange<Double> {
            Double(2 * (1 - min(1, max(0, maximum))))...Double(2 * (1 - min(1, max(0, minimum))))
        }
    }

    public init(filters: [Filter] = [], excluding: Int64? = nil, scoreRange: ScoreRange? = nil) {
        self.filters = filters
        self.excluding = excluding
        self.scoreRange = scoreRange
    }

    /// Whether the scope is the whole catalog.
    public var isEverything: Bool { filters.isEmpty && excluding == nil && scoreRange == nil }
}

/// What k-NN orders by: nearness in one space, or a fused score of both
/// (``SimilarityMode``): `w·learned + (1 − w)·colour` of ``Similarity``'s scores.
public enum NeighbourTarget: Sendable, Hashable {
    case color([Float])
    case learned([Float])
    case fused(color: [Float], learned: [Float], learnedWeight: Float)

    /// The length of the vector a single-space target compares (the learned one's for fused).
    public var dimension: Int {
        switch self {
        case .color(let vector), .learned(let vector): vector.count
        case .fused(_, let learned, _): learned.count
        }
    }
}

/// One catalog image as the k-NN stage sees it.
public struct Neighbour: Sendable, Hashable {
    public var id: Int64
    public var name: String
    public var source: String
    /// The colour vector.
    public var vector: [Float]
    /// The learned vector; nil when the image has none (or the catalog no learned model).
    public var learned: [Float]?

    public init(id: Int64, name: String, source: String, vector: [Float], learned: [Float]? = nil) {
        self.id = id
        self.name = name
        self.source = source
        self.vector = vector
        self.learned = learned
    }
}
