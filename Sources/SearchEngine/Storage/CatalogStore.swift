import VisualSearch

/// Where a catalog lives: the storage seam of the engine.
///
/// A store keeps images (name, source, size, content hash, feature vector,
/// palette), their typed metadata (``FieldSchema``) and a version counter
/// that every committed change moves, so engines in other processes know
/// to reload. It answers the SQL side of a query — which images pass the
/// `fq` filters, their metadata, facet counts — while similarity itself is
/// scored in memory over ``FeatureIndex``.
///
/// ``SQLiteCatalogStore`` is the embedded default; a second store (PostgreSQL)
/// runs the same conformance suite (`Tests/SearchEngineTests/Storage`).
///
/// Contract every store keeps (the conformance suite checks each):
/// - every write is one transaction: after a crash, all of it or none of it;
/// - ``upsert(_:schema:)`` replaces by `im_name`; metadata values that do not
///   fit their field's type are rejected before anything is written;
/// - vectors are ``ColorFeatures/dimensions`` long; a batch holding another
///   length is refused before anything is written;
/// - ``version()`` moves on every committed change, by any process, and only
///   then: a write that changes nothing (an empty batch, unknown names) leaves it;
/// - filters: `string` exact, `text` by words (every word must occur, any
///   order, case- and accent-insensitive), numbers exact or `min,max`
///   inclusive; an undeclared field is ``VisualSearchError/unknownField(_:)``;
/// - facet values come by descending count, then ascending value.
public protocol CatalogStore: Sendable {
    /// Where the store is, for messages: a path or a URL without its password.
    var location: String { get }

    /// The declared fields.
    func schema() async throws(VisualSearchError) -> FieldSchema
    /// Adds fields; a field declared with another type is retyped when no image has a value for it, otherwise that is an error.
    func declare(_ schema: FieldSchema) async throws(VisualSearchError)

    /// Inserts or replaces images by `im_name`, in one transaction.
    func upsert(_ items: [CatalogItem], schema: FieldSchema) async throws(VisualSearchError)
    /// Replaces the metadata of existing images (vectors kept), in one transaction; unknown names are skipped.
    func updateMetadata(_ updates: [MetadataUpdate], schema: FieldSchema) async throws(VisualSearchError)
    /// Removes images by name, in one transaction; returns how many existed.
    func remove(_ imageNames: [String]) async throws(VisualSearchError) -> Int

    /// `im_name` → content hash, so unchanged files are not decoded again.
    func contentHashes() async throws(VisualSearchError) -> [String: String]
    /// The number of images.
    func count() async throws(VisualSearchError) -> Int
    /// Image names in ascending byte order (SQLite's `BINARY`, PostgreSQL's
    /// `"C"` collation), `limit` of them after skipping `offset`: a catalog
    /// to browse page by page.
    func imageNames(offset: Int, limit: Int) async throws(VisualSearchError) -> [String]
    /// A counter moved by every committed change, by any process.
    func version() async throws(VisualSearchError) -> Int
    /// Every image's vector, name, source and palette, in a stable order;
    /// with the learned vectors of the ``learnedModel()`` too, as `learned`
    /// says, when the catalog has them.
    func loadIndex(learned: LearnedVectorLoading) async throws(VisualSearchError) -> FeatureIndex

    /// What made the catalog's learned vectors (``LearnedEmbedder``); nil when it has none.
    func learnedModel() async throws(VisualSearchError) -> EmbeddingDescriptor?
    /// Records what makes the learned vectors written from now on (``Indexer``
    /// does before its first batch); moves the version when it changes.
    func recordLearnedModel(_ descriptor: EmbeddingDescriptor) async throws(VisualSearchError)

    /// Ids of the images passing every filter; `nil` when there are no filters.
    func matchingIDs(_ filters: [Filter], schema: FieldSchema) async throws(VisualSearchError) -> Set<Int64>?
    /// Metadata of the given images: every field, or only `fields`.
    func valueMaps(for ids: [Int64], fields: [String]?) async throws(VisualSearchError) -> [Int64: [String: String]]
    /// Per field: the `limit` most frequent values with counts (string, text),
    /// or the minimum and maximum (numbers), over `ids` (every image when nil).
    func facetCounts(_ fields: [String], schema: FieldSchema, ids: [Int64]?, limit: Int) async throws(VisualSearchError) -> [FieldAggregate]

    /// Every image with its metadata, by `im_name`.
    func export() async throws(VisualSearchError) -> [ExportedImage]
    /// A health check of the storage ("ok" when healthy).
    func integrityCheck() async throws(VisualSearchError) -> String

    /// Saves a data API insert transaction's progress (replacing its earlier
    /// state), so any process on the catalog — another server replica, this
    /// one after a restart — answers `/insert/status`. The most recent
    /// ``insertTransactionsKept`` transactions are kept.
    func saveInsertTransaction(_ progress: InsertStatusResponse.Progress) async throws(VisualSearchError)
    /// An insert transaction's last saved progress; nil for an unknown id.
    func insertTransaction(_ id: String) async throws(VisualSearchError) -> InsertStatusResponse.Progress?
}

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

extension CatalogStore {
    /// Every image's vectors, learned ones included when the catalog has them.
    public func loadIndex() async throws(VisualSearchError) -> FeatureIndex {
        try await loadIndex(learned: .compact)
    }

    /// How many images hold a learned vector of the catalog's ``learnedModel()``.
    public func learnedVectorCount() async throws(VisualSearchError) -> Int {
        guard let model = try await learnedModel() else { return 0 }
        return try await contentHashes().values.filter { ImageFeatures.hasLearned($0, of: model) }.count
    }

    /// How many images an older vsearch's features computed (their stored
    /// content hash lacks this version's tag, ``ImageFeatures/isCurrent(_:)``):
    /// they answer with their old vectors until `vsearch index` runs again.
    public func staleFeatureCount() async throws(VisualSearchError) -> Int {
        try await contentHashes().values.filter { !ImageFeatures.isCurrent($0) }.count
    }
}
