import VisualSearch

/// Where a catalog lives: the storage seam of the engine, in four roles a
/// caller composes as it needs them (as GRDB's `DatabaseReader` and
/// `DatabaseWriter`):
///
/// - ``CatalogReader``: what a query reads — schema, vectors, filters, metadata, facets;
/// - ``CatalogWriter``: a reader that also declares fields and writes images (the ``Indexer``);
/// - ``CatalogAdmin``: health checks (`vsearch catalog stats`, `/health`);
/// - ``InsertJournal``: the data API's insert progress, shared by every process on the catalog.
///
/// A store keeps images (name, source, size, content hash, feature vector,
/// palette), their typed metadata (``FieldSchema``) and a version counter
/// that every committed change moves, so engines in other processes know
/// to reload. It answers the SQL side of a query — which images pass the
/// `fq` filters, their metadata, facet counts — while similarity itself is
/// scored in memory over ``FeatureIndex`` (or by a ``NearestNeighbourStore``).
///
/// Two stores keep every role, each in its own target holding its driver:
/// `SQLiteCatalogStore` (target SQLiteCatalog, the embedded default) and
/// `PostgreSQLCatalogStore` (target PostgreSQLCatalog); the engine knows
/// neither. Each role's conformance suite (`Tests/SearchEngineTests/Storage`)
/// runs on both and on the in-memory store the engine's tests use.
///
/// Contract every store keeps (the conformance suites check each):
/// - every write is one transaction: after a crash, all of it or none of it;
/// - ``CatalogWriter/upsert(_:schema:)`` replaces by `im_name`; metadata values that do not
///   fit their field's type are rejected before anything is written;
/// - vectors are ``ColorFeatures/dimensions`` long; a batch holding another
///   length is refused before anything is written;
/// - ``CatalogReader/version()`` moves on every committed change, by any process, and only
///   then: a write that changes nothing (an empty batch, unknown names) leaves it;
/// - filters: `string` exact, `text` by words (every word must occur, any
///   order, case- and accent-insensitive), numbers exact or `min,max`
///   inclusive; an undeclared field is ``VisualSearchError/unknownField(_:)``;
/// - facet values come by descending count, then ascending value.
public typealias CatalogStore = CatalogWriter & CatalogAdmin & InsertJournal

/// Which learned vectors ``CatalogStore/loadIndex(learned:)`` loads.
public enum LearnedVectorLoading: Sendable, Hashable {
    /// None: a colour-only index.
    case none
    /// In their `Int8` form (``QuantizedMatrix``): what an engine searches.
    case compact
    /// Exactly as stored too (a catalog copy writes them).
    case exact
}

/// How many insert transactions a store keeps for `/insert/status`.
public let insertTransactionsKept = 1000

/// New metadata for an existing image.
public struct MetadataUpdate: Sendable, Hashable {
    public var imageName: String
    public var metadata: [String: String]

    public init(imageName: String, metadata: [String: String]) {
        self.imageName = imageName
        self.metadata = metadata
    }
}

/// A facet's raw aggregate as a store computes it; ``FacetShaper`` turns it
/// into the API's ``Facet``.
public enum FieldAggregate: Sendable, Hashable {
    /// The most frequent values of a string or text field, by descending count then value.
    case values(field: String, counts: [(value: String, count: Int)])
    /// The bounds of a numeric field; nil when no image has a value.
    case range(field: String, min: Double?, max: Double?)

    public static func == (lhs: FieldAggregate, rhs: FieldAggregate) -> Bool {
        switch (lhs, rhs) {
        case let (.values(a, x), .values(b, y)): a == b && x.map(\.value) == y.map(\.value) && x.map(\.count) == y.map(\.count)
        case let (.range(a, x1, x2), .range(b, y1, y2)): a == b && x1 == y1 && x2 == y2
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .values(let field, let counts):
            hasher.combine(field)
            for entry in counts { hasher.combine(entry.value); hasher.combine(entry.count) }
        case .range(let field, let low, let high):
            hasher.combine(field); hasher.combine(low); hasher.combine(high)
        }
    }
}

/// One image as `vsearch catalog export` prints it.
public struct ExportedImage: Sendable, Hashable, Codable {
    public var imageName: String
    public var source: String
    public var width: Int
    public var height: Int
    public var metadata: [String: String]

    public init(imageName: String, source: String, width: Int, height: Int, metadata: [String: String]) {
        self.imageName = imageName
        self.source = source
        self.width = width
        self.height = height
        self.metadata = metadata
    }
}

extension CatalogReader {
    /// Every image's vectors, learned ones included when the catalog has them.
    public func loadIndex() async throws(VisualSearchError) -> FeatureIndex {
        try await loadIndex(learned: .compact)
    }

    /// The images of `ids`, from the whole index: a store that keeps no saved
    /// vectors never asks for a few rows often enough to need its own query.
    public func loadIndex(ids: [Int64]) async throws(VisualSearchError) -> FeatureIndex {
        try await loadIndex(learned: .compact).subset(ids: ids)
    }

    /// No log of changes: an engine loads the index again when the version moves.
    public func changes(since version: Int) async throws(VisualSearchError) -> CatalogChanges? { nil }

    /// How many images hold a learned vector of the catalog's ``learnedModel()``.
    public func learnedVectorCount() async throws(VisualSearchError) -> Int {
        try await featureCensus().learned
    }

    /// ``CatalogReader/featureCensus()`` from ``contentHashes()``.
    public func featureCensus() async throws(VisualSearchError) -> (learned: Int, stale: Int) {
        let model = try await learnedModel()
        var census = FeatureCensus(model: model)
        for hash in try await contentHashes().values { census.count(hash) }
        return (census.learned, census.stale)
    }

    /// How many images an older vsearch's features computed (their stored
    /// content hash lacks this version's tag, ``ImageFeatures/isCurrent(_:)``):
    /// they answer with their old vectors until `vsearch index` runs again.
    public func staleFeatureCount() async throws(VisualSearchError) -> Int {
        try await contentHashes().values.filter { !ImageFeatures.isCurrent($0) }.count
    }
}

/// Counts content hashes as ``CatalogReader/featureCensus()`` does: those carrying the
/// learned model's tag, and those an older vsearch's colour features made.
public struct FeatureCensus: Sendable {
    let tag: String?
    public private(set) var learned = 0
    public private(set) var stale = 0

    public init(model: EmbeddingDescriptor?) {
        tag = model.map(ImageFeatures.learnedTag(of:))
    }

    public mutating func count(_ hash: String) {
        if let tag, hash.hasSuffix(tag) { learned += 1 }
        if !ImageFeatures.isCurrent(hash) { stale += 1 }
    }
}
