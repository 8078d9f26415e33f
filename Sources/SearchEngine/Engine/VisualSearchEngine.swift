import Foundation
import ImageOps
import Synchronization
import VisualSearch

/// The offline engine: answers every ``VisualSearchService`` request from a
/// ``CatalogStore`` with colour-histogram similarity, with the parameters
/// and response shapes of the hosted services — so an app can be built and
/// tested with no account and no network, and `vsearch serve` can stand in
/// for ViSearch.
///
/// A query runs in visible stages: the query vector (stored for an
/// `im_name`, computed for an image by ``ImageFeatures``, or a colour) →
/// `fq` filters in the store → scores over the in-memory ``FeatureIndex`` →
/// ``Ranking`` (score range, exclusion, ties, dedup, the page) → metadata
/// and facets from the store → ``ResponseShaper``.
///
/// The in-memory index is loaded once and reloaded when the store's version
/// counter moves (another process indexed or removed images). Thread-safe:
/// queries may run concurrently.
///
/// ```swift
/// let engine = try await VisualSearchEngine(store: SQLiteCatalogStore(path: "catalog.sqlite"))
/// var parameters = SearchParameters()
/// parameters.includesScore = true
/// let response = try await engine.search(SearchRequest(imageName: "chelsea_cat", parameters: parameters))
/// ```
public final class VisualSearchEngine: VisualSearchService, Sendable {
    public typealias Failure = VisualSearchError

    /// Engine settings; every property has a documented default.
    public struct Configuration: Sendable {
        /// What `im_url` may read or fetch. ``ImageSourcePolicy/uploadsOnly`` by default.
        public var imageSources: ImageSourcePolicy = .uploadsOnly
        /// Limits for query and inserted images. ``ImageLimits/default`` by default.
        public var limits: ImageLimits = .default
        /// Where uploaded query images are cached for `im_id`; `query-cache`
        /// beside a SQLite catalog by default (a temporary folder otherwise).
        public var queryCacheDirectory: String?
        /// Indexing of data API inserts.
        public var indexing = Indexer.Configuration()
        public init() {}
    }

    /// The catalog.
    public let store: any CatalogStore
    public let configuration: Configuration
    let loader: QueryImageLoader
    let jobs: InsertJobs
    let state = Mutex<Snapshot?>(nil)

    /// What the engine says about objects in discover search.
    public static let offlineDetectionNote =
        "offline engine: no object detector; the whole image, or each box or point given, is treated as one object"

    struct Snapshot: Sendable {
        var version: Int
        var index: FeatureIndex
        var schema: FieldSchema
    }

    /// Creates an engine and loads the catalog's vectors.
    public init(store: any CatalogStore, configuration: Configuration = Configuration()) async throws(VisualSearchError) {
        self.store = store
        self.configuration = configuration
        let cacheDirectory = configuration.queryCacheDirectory
            ?? (store as? SQLiteCatalogStore).map { (($0.path as NSString).deletingLastPathComponent as NSString).appendingPathComponent("query-cache") }
            ?? (NSTemporaryDirectory() as NSString).appendingPathComponent("vsearch-query-cache")
        loader = QueryImageLoader(policy: configuration.imageSources, cache: QueryImageCache(directory: cacheDirectory), limits: configuration.limits)
        jobs = InsertJobs(indexer: Indexer(store: store, configuration: configuration.indexing), loader: loader)
        _ = try await snapshot()
    }

    /// The current index and schema, reloaded if the catalog changed.
    func snapshot() async throws(VisualSearchError) -> Snapshot {
        let version = try await store.version()
        if let current = state.withLock({ $0 }), current.version == version { return current }
        let fresh = Snapshot(version: version, index: try await store.loadIndex(), schema: try await store.schema())
        state.withLock { $0 = fresh }
        return fresh
    }

    /// Where a catalog image came from (its indexed path or URL).
    public func source(of imageName: String) async -> String? {
        await sources(of: [imageName])[imageName]
    }

    /// Where catalog images came from, from one snapshot; unknown names are left out.
    public func sources(of imageNames: [String]) async -> [String: String] {
        guard let snapshot = try? await snapshot() else { return [:] }
        var sources: [String: String] = [:]
        for name in imageNames {
            if let row = snapshot.index.row(named: name) { sources[name] = snapshot.index.sources[row] }
        }
        return sources
    }

    // MARK: - ViSearch

    public func search(_ request: SearchRequest) async throws(VisualSearchError) -> SearchResponse {
        let snapshot = try await snapshot()
        guard let row = snapshot.index.row(named: request.imageName) else { throw .imageNotFound(request.imageName) }
        return try await similar(to: snapshot.index.vector(at: row), excluding: nil, method: "search",
                                 parameters: request.parameters, snapshot: snapshot)
    }

    public func recommendations(_ request: RecommendationsRequest) async throws(VisualSearchError) -> SearchResponse {
        let snapshot = try await snapshot()
        guard let row = snapshot.index.row(named: request.imageName) else { throw .imageNotFound(request.imageName) }
        var parameters = request.parameters
        parameters.deduplicates = true
        return try await similar(to: snapshot.index.vector(at: row), excluding: row, method: "recommendations",
                                 parameters: parameters, snapshot: snapshot)
    }

    public func uploadSearch(_ request: UploadSearchRequest) async throws(VisualSearchError) -> SearchResponse {
        let snapshot = try await snapshot()
        let (bytes, query) = try await queryFeatures(request.query)
        var response = try await similar(to: query.vector, excluding: nil, method: "uploadsearch", parameters: request.parameters,
                                         snapshot: snapshot)
        response.imageID = loader.cache.store(bytes)
        if request.parameters.detection != nil { response.productTypes = [] }
        return response
    }

    public func colorSearch(_ request: ColorSearchRequest) async throws(VisualSearchError) -> SearchResponse {
        let snapshot = try await snapshot()
        let color = LabColor(request.color)
        let parameters = request.parameters
        try parameters.validate()
        let rows = try await candidateRows(parameters, snapshot: snapshot)
        let scores = (rows ?? Array(0..<snapshot.index.count)).map { snapshot.index.palettes[$0].coverage(of: color) }
        let ranked = Ranking(parameters: parameters).rank(scores: scores, rows: rows, names: snapshot.index.names)
        return try await respond(ranked, method: "colorsearch", parameters: parameters, snapshot: snapshot)
    }

    public func discoverSearch(_ request: DiscoverSearchRequest) async throws(VisualSearchError) -> SearchResponse {
        let snapshot = try await snapshot()
        let prepared: DiscoverSearchRequest
        do { prepared = try request.prepared(limits: configuration.limits) } catch { throw .image(error) }
        let bytes = try await loader.load(prepared.query.image)
        let parameters = prepared.effectiveParameters
        var regions: [PixelBox?] = ([prepared.query.box] + prepared.points.map { Optional($0.box) }).filter { $0 != nil }
        if regions.isEmpty { regions = [nil] }
        if let limit = prepared.detectionLimit { regions = Array(regions.prefix(limit)) }
        var objects: [SearchObject] = []
        for region in regions {
            let query: (vector: [Float], region: PixelRect)
            do { query = try ImageFeatures.query(bytes, box: region, limits: configuration.limits) } catch { throw .image(error) }
            let rendered = try await similar(to: query.vector, excluding: nil, method: "discoversearch", parameters: parameters,
                                             snapshot: snapshot)
            let rect = query.region
            objects.append(SearchObject(type: region == nil ? "image" : (region?.isPoint == true ? "point" : "box"),
                                        score: 1, box: [rect.x, rect.y, rect.x + rect.width, rect.y + rect.height],
                                        total: rendered.total, result: rendered.result, facets: rendered.facets))
        }
        return SearchResponse(method: "discoversearch", page: parameters.page, limit: parameters.limit,
                              total: objects.reduce(0) { $0 + $1.total }, result: [], requestID: RequestID.make(),
                              imageID: loader.cache.store(bytes), productTypes: [], objects: objects,
                              offlineNote: VisualSearchEngine.offlineDetectionNote)
    }

    // MARK: - ProductSearch

    public func productSearch(_ request: ProductSearchRequest) async throws(VisualSearchError) -> ProductSearchResponse {
        let parameters = Self.productParameters(request.parameters)
        let response = try await uploadSearch(UploadSearchRequest(request.query, parameters: parameters))
        let snapshot = try await snapshot()
        return ResponseShaper.productResponse(response, method: "product/search_by_image") { name in
            snapshot.index.row(named: name).map { snapshot.index.sources[$0] }
        }
    }

    public func productRecommendations(_ request: ProductRecommendationsRequest) async throws(VisualSearchError) -> ProductSearchResponse {
        let parameters = Self.productParameters(request.parameters)
        let response = try await recommendations(RecommendationsRequest(imageName: request.productID, parameters: parameters))
        let snapshot = try await snapshot()
        let source = { (name: String) in snapshot.index.row(named: name).map { snapshot.index.sources[$0] } }
        var product = ResponseShaper.productResponse(response, method: "product/recommendations", source: source)
        product.productInfo = ProductSearchResponse.Product(productID: request.productID, mainImageURL: source(request.productID))
        return product
    }

    /// ProductSearch's reading of the shared parameters, as its wire form
    /// (`SearchParameters(wire:dialect:)`) gives them to a server: scores
    /// always, and the fields of `attrs_to_get` — every field when none are
    /// named (ProductSearch has no `get_all_fl`) — so a request gets the same
    /// answer from the engine as through a client and `vsearch serve`.
    static func productParameters(_ given: SearchParameters) -> SearchParameters {
        var parameters = given
        parameters.includesScore = true
        parameters.returnsAllFields = parameters.fields.isEmpty
        return parameters
    }

    // MARK: - Data API

    public func insert(_ request: InsertRequest) async throws(VisualSearchError) -> DataAPIResponse {
        guard !request.items.isEmpty else { throw .invalidParameter(name: "im_name[0]", reason: "no images given") }
        return DataAPIResponse(status: .ok, method: "insert", transactionID: try await jobs.start(request.items), total: request.items.count)
    }

    public func insertStatus(_ request: InsertStatusRequest) async throws(VisualSearchError) -> InsertStatusResponse {
        guard let progress = try await jobs.status(request.transactionID) else {
            throw .invalidParameter(name: "trans_id", reason: "no insert transaction \(request.transactionID) in this catalog")
        }
        return InsertStatusResponse(result: [progress])
    }

    public func remove(_ request: RemoveRequest) async throws(VisualSearchError) -> DataAPIResponse {
        let removed = try await store.remove(request.imageNames)
        return DataAPIResponse(status: .ok, method: "remove", total: removed)
    }

    // MARK: - Stages

    /// The query image's bytes (prepared as the SDKs upload it, when the request asks) and its features.
    func queryFeatures(_ query: ImageQuery) async throws(VisualSearchError) -> ([UInt8], (vector: [Float], region: PixelRect)) {
        let prepared: ImageQuery
        do { prepared = try query.prepared(limits: configuration.limits) } catch { throw .image(error) }
        let bytes = try await loader.load(prepared.image)
        do { return (bytes, try ImageFeatures.query(bytes, box: prepared.box, limits: configuration.limits)) } catch { throw .image(error) }
    }

    /// Rows passing the filters, sorted; nil when there are no filters.
    func candidateRows(_ parameters: SearchParameters, snapshot: Snapshot) async throws(VisualSearchError) -> [Int]? {
        let ids = try await store.matchingIDs(parameters.filters, schema: snapshot.schema)
        return ids.map { $0.compactMap { snapshot.index.row(id: $0) }.sorted() }
    }

    /// Similarity ranking against a query vector, then the response.
    func similar(to vector: [Float], excluding: Int?, method: String, parameters: SearchParameters,
                 snapshot: Snapshot) async throws(VisualSearchError) -> SearchResponse {
        try parameters.validate()
        let index = snapshot.index
        let rows = try await candidateRows(parameters, snapshot: snapshot)
        let scores = index.dotProducts(with: vector, rows: rows).map(Similarity.score(dot:))
        let ranked = Ranking(parameters: parameters).rank(scores: scores, rows: rows, names: index.names, excluding: excluding) {
            Similarity.score(dot: index.dot($0, $1))
        }
        return try await respond(ranked, method: method, parameters: parameters, snapshot: snapshot)
    }

    /// Metadata and facets from the store, shaped into the response.
    func respond(_ ranked: Ranking.Ranked, method: String, parameters: SearchParameters,
                 snapshot: Snapshot) async throws(VisualSearchError) -> SearchResponse {
        let index = snapshot.index
        let shaper = ResponseShaper(parameters: parameters)
        let ids = ranked.page.map { index.ids[$0.row] }
        let maps = shaper.wantsValues ? try await store.valueMaps(for: ids, fields: shaper.valueFields) : [:]
        var facets: Result<[Facet], VisualSearchError>?
        if !parameters.facets.isEmpty {
            do {
                let aggregates = try await store.facetCounts(parameters.facets, schema: snapshot.schema,
                                                             ids: ranked.matchedRows.map { $0.map { index.ids[$0] } },
                                                             limit: parameters.facetsLimit)
                facets = .success(FacetShaper.facets(aggregates, showCount: parameters.facetsShowCount))
            } catch {
                facets = .failure(error)
            }
        }
        return shaper.searchResponse(method: method, ranked: ranked,
                                     rows: ResponseShaper.Rows(names: index.names, ids: index.ids),
                                     valueMaps: maps, facets: facets, requestID: RequestID.make())
    }
}
