import VisualSearch

/// The reading role of a catalog store (``CatalogStore``): everything a
/// query, a `catalog` command or a copy reads. Safe to call from any task;
/// reads never wait for a writer.
public protocol CatalogReader: Sendable {
    /// Where the store is, for messages: a path or a URL without its password.
    var location: String { get }

    /// The declared fields.
    func schema() async throws(CatalogStoreError) -> FieldSchema
    /// `im_name` → content hash, so unchanged files are not decoded again.
    func contentHashes() async throws(CatalogStoreError) -> [String: String]
    /// The number of images.
    func count() async throws(CatalogStoreError) -> Int
    /// Image names in ascending byte order (SQLite's `BINARY`, PostgreSQL's
    /// `"C"` collation), `limit` of them after skipping `offset`: a catalog
    /// to browse page by page.
    func imageNames(offset: Int, limit: Int) async throws(CatalogStoreError) -> [String]
    /// A counter moved by every committed change, by any process.
    func version() async throws(CatalogStoreError) -> Int
    /// Every image's vector, name, source and palette, in a stable order;
    /// with the learned vectors of the ``learnedModel()`` too, as `learned`
    /// says, when the catalog has them.
    func loadIndex(learned: LearnedVectorLoading) async throws(CatalogStoreError) -> FeatureIndex
    /// The images of `ids` as ``loadIndex(learned:)`` loads them with `.compact` (unknown ids left out):
    /// what saved vectors are compared with before they answer (``VectorFiles``).
    func loadIndex(ids: [Int64]) async throws(CatalogStoreError) -> FeatureIndex
    /// What changed in the images after `version`, up to the version now; nil when the store
    /// cannot say (it keeps no log, or not back that far, or the version went back): load again.
    func changes(since version: Int) async throws(CatalogStoreError) -> CatalogChanges?
    /// How many images hold a learned vector of the catalog's ``learnedModel()`` and how many an
    /// older vsearch's features computed (their content hashes say so), in one read.
    func featureCensus() async throws(CatalogStoreError) -> (learned: Int, stale: Int)
    /// What made the catalog's learned vectors (``LearnedEmbedder``); nil when it has none.
    func learnedModel() async throws(CatalogStoreError) -> EmbeddingDescriptor?

    /// Ids of the images passing every filter; `nil` when there are no filters.
    func matchingIDs(_ filters: [Filter], schema: FieldSchema) async throws(CatalogStoreError) -> Set<Int64>?
    /// Metadata of the given images: every field, or only `fields`.
    func valueMaps(for ids: [Int64], fields: [String]?) async throws(CatalogStoreError) -> [Int64: [String: String]]
    /// Per field: the `limit` most frequent values with counts (string, text),
    /// or the minimum and maximum (numbers), over `ids` (every image when nil).
    func facetCounts(_ fields: [String], schema: FieldSchema, ids: [Int64]?, limit: Int) async throws(CatalogStoreError) -> [FieldAggregate]
    /// Every image with its metadata, by `im_name`.
    func export() async throws(CatalogStoreError) -> [ExportedImage]
}
