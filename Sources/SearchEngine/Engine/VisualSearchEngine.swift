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
/// the candidates (``Candidates``: `fq` filters in the store, then scores
/// over the in-memory ``FeatureIndex`` — or, on a ``NearestNeighbourStore``,
/// the nearest images as the store finds them) → ``Ranking`` (score range,
/// exclusion, ties, dedup, the page) → metadata and facets from the store →
/// ``ResponseShaper``.
///
/// The in-memory index is loaded when first needed and reloaded when the
/// store's version counter moves (another process indexed or removed
/// images); on a ``NearestNeighbourStore`` only colour search needs it.
/// Thread-safe: queries may run concurrently.
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
        /// How recommendations blend visual similarity with the collector's
        /// events (``RecommendationBlend``); ``RecommendationBlend/visualOnly`` ignores events.
        public var recommendations = RecommendationBlend()
        /// How long recommendations use the events read last before asking
        /// the store for new ones: 1 s by default (0: every request asks).
        public var engagementRefresh: Duration = .seconds(1)
        /// Where query images are decoded: on the caller's task when nil (the
        /// default, right for a command line), or on an ``ImageWorkPool``'s
        /// threads under its pixel budget (a server: `vsearch serve` sets one).
        public var imageWork: ImageWorkPool?
        /// What ProductSearch's `main_image_url` says of a catalog image:
        /// its indexed source by default (a command line shows its own user
        /// the file); with a prefix, `prefix` + the percent-encoded `im_name`
        /// for every image whose source is a file — a server never tells
        /// where its files are (`vsearch serve` sets `/images/`, its image
        /// route). Sources that are `http(s)` URLs are shown as they are.
        public var imageRoute: String?
        public init() {}
    }

    /// The catalog.
    public let store: any CatalogStore
    public let configuration: Configuration
    let loader: QueryImageLoader
    let jobs: InsertJobs
    let state = Mutex<Snapshot?>(nil)
    let engagement = Mutex(EngagementCache())

    /// What the engine says about objects in discover search.
    public static let offlineDetectionNote =
        "offline engine: no object detector; the whole image, or each box or point given, is treated as one object"

    let scopeSizes = Mutex<ScopeSizes>(ScopeSizes())

    /// The catalog as one version of it: its schema and, once loaded, every vector.
    struct Snapshot: Sendable {
        var version: Int
        var schema: FieldSchema
        /// Nil on a ``NearestNeighbourStore`` until a query needs it in memory.
        var index: FeatureIndex?
    }

    /// Creates an engine and loads the catalog's vectors (only its schema
    /// on a ``NearestNeighbourStore``).
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

    /// The store when it runs k-NN itself.
    var neighbourStore: (any NearestNeighbourStore)? { store as? any NearestNeighbourStore }

    /// The current schema, and the in-memory index when `withIndex` (always
    /// on a store without k-NN of its own); reloaded when the catalog changed.
    func snapshot(withIndex: Bool = false) async throws(VisualSearchError) -> Snapshot {
        let version = try await store.version()
        let needsIndex = withIndex || neighbourStore == nil
        if let current = state.withLock({ $0 }), current.version == version, current.index != nil || !needsIndex { return current }
        let fresh = Snapshot(version: version, schema: try await store.schema(), index: needsIndex ? try await store.loadIndex() : nil)
        state.withLock { $0 = fresh }
        return fresh
    }

    /// Where a catalog image came from (its indexed path or URL).
    public func source(of imageName: String) async -> String? {
        await sources(of: [imageName])[imageName]
    }

    /// Where catalog images came from; unknown names are left out.
    public func sources(of imageNames: [String]) async -> [String: String] {
        if let neighbourStore { return (try? await neighbourStore.sources(of: imageNames)) ?? [:] }
        guard let index = try? await snapshot().index else { return [:] }
        var sources: [String: String] = [:]
        for name in imageNames {
            if let row = index.row(named: name) { sources[name] = index.sources[row] }
        }
        return sources
    }

    // MARK: - ViSearch

    public func search(_ request: SearchRequest) async throws(VisualSearchError) -> SearchResponse {
        let snapshot = try await snapshot()
        let image = try await catalogImage(named: request.imageName, snapshot: snapshot)
        return try await similar(to: [image.vector], excluding: nil, method: "search", parameters: request.parameters, snapshot: snapshot)
    }

    public func recommendations(_ request: RecommendationsRequest) async throws(VisualSearchError) -> SearchResponse {
        let snapshot = try await snapshot()
        let image = try await catalogImage(named: request.imageName, snapshot: snapshot)
        var parameters = request.parameters
        parameters.deduplicates = true
        let blend = try await blendTerms(for: request.imageName, parameters: parameters)
        return try await similar(to: [image.vector], excluding: image, method: "recommendations", parameters: parameters,
                                 snapshot: snapshot, blend: blend)
    }

    public func uploadSearch(_ request: UploadSearchRequest) async throws(VisualSearchError) -> SearchResponse {
        let snapshot = try await snapshot()
        let (bytes, query) = try await queryFeatures(request.query)
        var response = try await similar(to: query.vectors, excluding: nil, method: "uploadsearch", parameters: request.parameters,
                                         snapshot: snapshot)
        response.imageID = loader.cache.store(bytes)
        if request.parameters.detection != nil { response.productTypes = [] }
        return response
    }

    /// Find similar by a feature vector computed elsewhere (a ``ColorFeatures``
    /// vector, unit length): the filters, ranking and response of ``search(_:)``.
    public func vectorSearch(_ vector: [Float], parameters: SearchParameters = SearchParameters()) async throws(VisualSearchError) -> SearchResponse {
        guard vector.count == ColorFeatures.dimensions else {
            throw .invalidParameter(name: "vector", reason: "\(vector.count) floats, expected \(ColorFeatures.dimensions)")
        }
        let snapshot = try await snapshot()
        return try await similar(to: [vector], excluding: nil, method: "search", parameters: parameters, snapshot: snapshot)
    }

    public func colorSearch(_ request: ColorSearchRequest) async throws(VisualSearchError) -> SearchResponse {
        let parameters = request.parameters
        try parameters.validate()
        let snapshot = try await snapshot(withIndex: true)
        let candidates = try await coloursInMemory(LabColor(request.color), parameters: parameters, snapshot: snapshot)
        return try await respond(candidates, method: "colorsearch", parameters: parameters, snapshot: snapshot)
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
            let query = try await features(of: bytes, box: region)
            let rendered = try await similar(to: query.vectors, excluding: nil, method: "discoversearch", parameters: parameters,
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
        let sources = await mainImageURLs(of: response.result.map(\.imageName))
        return ResponseShaper.productResponse(response, method: "product/search_by_image") { sources[$0] }
    }

    public func productRecommendations(_ request: ProductRecommendationsRequest) async throws(VisualSearchError) -> ProductSearchResponse {
        let parameters = Self.productParameters(request.parameters)
        let response = try await recommendations(RecommendationsRequest(imageName: request.productID, parameters: parameters))
        let sources = await mainImageURLs(of: response.result.map(\.imageName) + [request.productID])
        var product = ResponseShaper.productResponse(response, method: "product/recommendations") { sources[$0] }
        product.productInfo = ProductSearchResponse.Product(productID: request.productID, mainImageURL: sources[request.productID])
        return product
    }

    /// `main_image_url` of catalog images, as ``Configuration/imageRoute`` says.
    func mainImageURLs(of imageNames: [String]) async -> [String: String] {
        let found = await sources(of: imageNames)
        guard let route = configuration.imageRoute else { return found }
        return found.reduce(into: [:]) { urls, entry in
            let lowered = entry.value.lowercased()
            let remote = lowered.hasPrefix("http://") || lowered.hasPrefix("https://")
            urls[entry.key] = remote ? entry.value : route + (entry.key.addingPercentEncoding(withAllowedCharacters: Self.pathSegment) ?? entry.key)
        }
    }

    /// What a path segment keeps unencoded (as JavaScript's `encodeURIComponent`).
    static let pathSegment = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.!~*'()")

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
        for (index, item) in request.items.enumerated() {
            try CatalogText.validateName(item.imageName, parameter: "im_name[\(index)]")
            for (field, value) in item.metadata {
                try CatalogText.validateName(field, parameter: "\(CatalogText.visible(field.prefix(80)))[\(index)]")
                try CatalogText.validateValue(value, parameter: "\(field)[\(index)]")
            }
        }
        return DataAPIResponse(status: .ok, method: "insert", transactionID: try await jobs.start(request.items), total: request.items.count)
    }

    /// Insert transactions running in this process.
    public var runningInserts: Int { jobs.runningCount }

    /// Stops the insert transactions running in this process between two
    /// batches and waits until each has saved its progress (what ran is
    /// committed; re-sending the insert finishes the rest). `vsearch serve`
    /// calls it when it shuts down.
    public func cancelInserts() async {
        await jobs.cancelAll()
    }

    public func insertStatus(_ request: InsertStatusRequest) async throws(VisualSearchError) -> InsertStatusResponse {
        guard let progress = try await jobs.status(request.transactionID) else {
            throw .invalidParameter(name: "trans_id", reason: "no insert transaction \(request.transactionID) in this catalog")
        }
        return InsertStatusResponse(result: [progress])
    }

    public func remove(_ request: RemoveRequest) async throws(VisualSearchError) -> DataAPIResponse {
        for (index, name) in request.imageNames.enumerated() { try CatalogText.validateName(name, parameter: "im_name[\(index)]") }
        let removed = try await store.remove(request.imageNames)
        return DataAPIResponse(status: .ok, method: "remove", total: removed)
    }

    // MARK: - Stages

    /// The query image's bytes (prepared as the SDKs upload it, when the request asks) and its features.
    func queryFeatures(_ query: ImageQuery) async throws(VisualSearchError) -> ([UInt8], QueryFeatures) {
        let prepared: ImageQuery
        do { prepared = try query.prepared(limits: configuration.limits) } catch { throw .image(error) }
        let bytes = try await loader.load(prepared.image)
        return (bytes, try await features(of: bytes, box: prepared.box))
    }

    /// A query image's vectors: planned from its header (limits checked
    /// before anything is decoded), then decoded where ``Configuration/imageWork`` says.
    func features(of bytes: [UInt8], box: PixelBox?) async throws(VisualSearchError) -> QueryFeatures {
        let limits = configuration.limits
        let plan: ImageFeatures.QueryPlan
        do { plan = try ImageFeatures.plan(bytes, box: box, limits: limits) } catch { throw .image(error) }
        guard let pool = configuration.imageWork else {
            do { return try ImageFeatures.query(bytes, box: box, plan: plan, limits: limits) } catch { throw .image(error) }
        }
        return try await pool.run(pixels: plan.decodedPixels) { () throws(ImageOpsError) in
            try ImageFeatures.query(bytes, box: box, plan: plan, limits: limits)
        }
    }

    /// Similarity to query vectors (a catalog image scores the best of its
    /// scores against them): the candidates, ranked, then the response.
    ///
    /// A score range (`score_min`/`score_max`) searches with the primary
    /// vector only, on every store: in PostgreSQL the range is a condition on
    /// one vector, and both stores must give the same answer.
    ///
    /// With `blend` (recommendations with events) each candidate's visual
    /// score is blended with what events add to it before ranking.
    func similar(to queryVectors: [[Float]], excluding: CatalogImage?, method: String, parameters: SearchParameters,
                 snapshot: Snapshot, blend: BlendTerms? = nil) async throws(VisualSearchError) -> SearchResponse {
        try parameters.validate()
        guard let primary = queryVectors.first else { throw .invalidParameter(name: "vector", reason: "no query vector") }
        let vectors = parameters.scoreMin != nil || parameters.scoreMax != nil ? [primary] : queryVectors
        let candidates = if let neighbourStore {
            try await nearestInStore(neighbourStore, to: vectors, excluding: excluding, parameters: parameters, snapshot: snapshot,
                                     blend: blend)
        } else {
            try await nearestInMemory(to: vectors, excluding: excluding, parameters: parameters, snapshot: snapshot, blend: blend)
        }
        return try await respond(candidates, method: method, parameters: parameters, snapshot: snapshot)
    }

    /// Metadata and facets from the store, shaped into the response.
    func respond(_ candidates: Candidates, method: String, parameters: SearchParameters,
                 snapshot: Snapshot) async throws(VisualSearchError) -> SearchResponse {
        let shaper = ResponseShaper(parameters: parameters)
        let ids = candidates.ranked.page.map { candidates.rows.ids[$0.row] }
        let maps = shaper.wantsValues ? try await store.valueMaps(for: ids, fields: shaper.valueFields) : [:]
        var facets: Result<[Facet], VisualSearchError>?
        if !parameters.facets.isEmpty {
            do {
                let aggregates = switch candidates.facetScope {
                case .ids(let ids):
                    try await store.facetCounts(parameters.facets, schema: snapshot.schema, ids: ids, limit: parameters.facetsLimit)
                case .scope(let scope):
                    try await neighbourStore?.facetCounts(parameters.facets, schema: snapshot.schema, scope: scope,
                                                          limit: parameters.facetsLimit) ?? []
                }
                facets = .success(FacetShaper.facets(aggregates, showCount: parameters.facetsShowCount))
            } catch {
                facets = .failure(error)
            }
        }
        return shaper.searchResponse(method: method, ranked: candidates.ranked, rows: candidates.rows,
                                     valueMaps: maps, facets: facets, requestID: RequestID.make())
    }
}
