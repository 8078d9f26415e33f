import Foundation
import ImageOps
import ConcurrencyToolkit
import VisualSearch
import Tracking

/// The offline engine: answers every ``VisualSearchService`` request from a
/// catalog (``CatalogWriter``) with learned or colour similarity, with the parameters
/// and response shapes of the hosted services — so an app can be built and
/// tested with no account and no network, and `vsearch serve` can stand in
/// for ViSearch.
///
/// A query runs in visible stages: the query vector (stored for an
/// `im_name`, computed for an image by ``FeaturePipeline``, or a colour) →
/// the candidates (``Candidates``, from the ``CandidateSource`` the engine
/// was given: `fq` filters in the store, then scores over the in-memory
/// ``FeatureIndex`` — or the nearest images as a ``NearestNeighbourStore``
/// finds them) → ``Ranking`` (score range,
/// exclusion, ties, dedup, the page) → metadata and facets from the store →
/// ``ResponseShaper``.
///
/// The in-memory index is loaded when first needed and reloaded when the
/// catalog's version counter moves (another process indexed or removed
/// images); with a ``CandidateSource/store(_:)`` only colour search needs it.
/// Thread-safe: queries may run concurrently.
///
/// ```swift
/// let store = try await SQLiteCatalogStore(path: "catalog.sqlite")   // target SQLiteCatalog
/// let engine = try await VisualSearchEngine(catalog: store, journal: store, engagement: store)
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
        /// Inserts are decoded under these too (issue 37: a server's inserts
        /// were decoded under the command line's 179 MP).
        public var limits: ImageLimits = .default
        /// Where uploaded query images are cached for `im_id`; a folder in the
        /// temporary directory by default (whoever opens a catalog file puts
        /// it beside the file: `CatalogLocation` does).
        public var queryCacheDirectory: String?
        /// How many insert transactions run and wait at once (``InsertLimits``' defaults: 2 and 8).
        public var inserts = InsertLimits()
        /// How recommendations blend visual similarity with the collector's
        /// events (``RecommendationBlend``); ``RecommendationBlend/visualOnly`` ignores events.
        public var recommendations = RecommendationBlend()
        /// How long the engine uses the catalog's version counter it read last
        /// before asking again: 1 ms by default, so a busy engine asks about once
        /// a millisecond instead of once a query; another process's change is
        /// seen that much later (this engine's own writes at once). 0: every query asks.
        public var versionCheckInterval: Duration = .milliseconds(1)
        /// How long recommendations use the events read last before asking
        /// the store for new ones: 1 s by default (0: every request asks).
        public var engagementRefresh: Duration = .seconds(1)
        /// Where query images and inserted images are decoded: on the caller's
        /// task (queries) and the indexer's threads (inserts) when nil — the
        /// default, right for a command line — or on one ``ImageWorkPool``'s
        /// threads under its pixel budget (a server: `vsearch serve` sets one).
        public var imageWork: ImageWorkPool?
        /// What ProductSearch's `main_image_url` says of a catalog image:
        /// its indexed source by default (a command line shows its own user
        /// the file); with a prefix, `prefix` + the percent-encoded `im_name`
        /// for every image whose source is a file — a server never tells
        /// where its files are (`vsearch serve` sets `/images/`, its image
        /// route). Sources that are `http(s)` URLs are shown as they are.
        public var imageRoute: String?
        /// The learned embedder (``LearnedEmbedder``), injected by whoever
        /// found the installed model; nil — the default — for a colour-only
        /// engine. Needed to embed query images and inserts with learned
        /// vectors; a search by `im_name` uses the stored vectors without it.
        public var learned: (any ImageEmbedder)?
        /// The object detector over the learned model (``ObjectDetector``),
        /// injected with ``learned``; nil — the default — for an engine
        /// without the model: discover search then treats the whole image
        /// (or each box or point) as one object and `detection` finds nothing, saying why.
        public var detector: ObjectDetector?
        /// The similarity a request that names none is answered with; nil —
        /// the default — picks ``defaultLearnedMode`` for a catalog with learned
        /// vectors whose model this engine has, ``SimilarityMode/color`` otherwise.
        public var similarity: SimilarityMode?
        /// The learned share of a `fused` score. ``defaultFusedWeight`` by default.
        public var fusedWeight: Float = VisualSearchEngine.defaultFusedWeight
        /// How k-NN runs on an in-memory catalog: exact scan or HNSW graph
        /// (``NearestNeighbourSettings``; `auto`, `ef_search` 100, exact below 1000 images by default).
        public var nearestNeighbours = NearestNeighbourSettings()
        /// Where an in-memory catalog's HNSW graphs are saved; nil — the
        /// default — keeps them in memory only (whoever opens a catalog file
        /// puts them beside it: `CatalogLocation` does, `catalog.sqlite.hnsw/`).
        public var graphFiles: GraphFiles?
        /// Whether this engine builds a graph that is missing or unusable
        /// (true by default: a server, `vsearch index`), or only loads and
        /// catches up saved ones, answering exactly without (one-shot
        /// commands, which should not spend minutes building), and whether it
        /// saves what it built or caught up. Graphs are only made for a catalog
        /// `auto` would use them on (over ``NearestNeighbourSettings/exactBelow``
        /// images), or any size with `approximate`.
        public var graphPolicy = ApproximateIndex.Policy(builds: true, saves: true)
        /// Told what each graph update did (loaded, built, caught up, why a saved graph was unusable, a failure).
        public var graphReports: (@Sendable (Result<ApproximateIndex.Report, HNSWGraphError>) -> Void)?
        /// Told where the in-memory index came from each time it is loaded or caught up (``IndexLoad``).
        public var indexReports: (@Sendable (IndexLoad) -> Void)?
        /// Told, on the thread describing them, after each object of a discover
        /// search is described: how many so far, of how many. Nil by default
        /// (progress; tests watch work stop once its request has ended).
        public var discoverProgress: (@Sendable (_ described: Int, _ objects: Int) -> Void)?
        public init() {}

        /// How this engine's images become vectors: decoded under ``limits``,
        /// embedded with colour and, when given, ``learned``.
        public var features: FeaturePipeline { FeaturePipeline(limits: limits, learned: learned) }

        /// ``features``, or without the learned model when a query does not use it (`learned` false).
        func features(learned usesLearned: Bool) -> FeaturePipeline {
            FeaturePipeline(limits: limits, learned: usesLearned ? learned : nil)
        }

        /// How data API inserts are indexed, made of this engine's own values (nothing set and then
        /// overwritten): under ``limits``, embedded by ``learned`` on ``imageWork``'s threads (the queries'
        /// pixel budget), and never recording the model — inserts follow the catalog's; only `vsearch index` records it.
        var insertIndexing: Indexer.Configuration {
            var indexing = Indexer.Configuration()
            indexing.features = features
            indexing.imageWork = imageWork
            indexing.recordsLearnedModel = false
            return indexing
        }
    }

    /// The similarity of a catalog with learned vectors when a request names
    /// none (measured in bench/RESULTS.md, "Issue 25").
    public static let defaultLearnedMode: SimilarityMode = .visual
    /// The learned share of a fused score (chosen on the tune split, bench/RESULTS.md).
    public static let defaultFusedWeight: Float = 0.7

    /// The catalog: what queries read and inserts write.
    public let catalog: any CatalogWriter
    /// Where insert transactions keep their progress.
    public let journal: any InsertJournal
    /// Where the candidates come from.
    public let candidates: CandidateSource
    /// The HNSW graphs of an in-memory catalog (nil with a store running k-NN itself).
    public let approximate: ApproximateIndex?
    /// Raised by ``stopCompacting()``: a compaction running stops, none starts.
    let compactionStop = StopSignal()
    /// The in-memory index saved beside the graphs, when they are saved (``VectorFiles``).
    public let vectorFiles: VectorFiles?
    let indexLoads = Locked<IndexLoad?>(nil)
    /// The collector's events that recommendations blend in; nil: visual only.
    public let engagementSource: (any CollectorStore)?
    public let configuration: Configuration
    let loader: QueryImageLoader
    let jobs: InsertJobs
    let state = Locked<Snapshot?>(nil)
    let versionCheck = VersionCheck()
    let engagement = Locked(EngagementCache())

    /// What the engine says about objects in discover search.
    public static let offlineDetectionNote = "a box given is searched as one object, as given"

    let scopeSizes = Locked<ScopeSizes>(ScopeSizes())
    let filteredScopes = Locked(FilteredScopes())

    /// The catalog as one version of it: its schema and, once loaded, every vector.
    struct Snapshot: Sendable {
        var version: Int
        var schema: FieldSchema
        /// What made the catalog's learned vectors; nil when it has none.
        var learnedModel: EmbeddingDescriptor?
        /// Nil with a ``CandidateSource/store(_:)`` until a query needs it in memory.
        var index: FeatureIndex?
    }

    /// Creates an engine and loads the catalog's vectors (only its schema
    /// when `candidates` is a store running k-NN itself).
    /// - Parameters:
    ///   - catalog: what queries read and inserts and removals write.
    ///   - journal: where insert transactions keep their progress (usually the catalog's store too).
    ///   - candidates: where the nearest images are found; in memory by default.
    ///   - engagement: the collector's events recommendations blend in (usually
    ///     the catalog's store); nil for visual-only recommendations.
    public init(catalog: any CatalogWriter, journal: any InsertJournal, candidates: CandidateSource = .inMemory,
                engagement: (any CollectorStore)? = nil, configuration: Configuration = Configuration()) async throws(VisualSearchError) {
        self.catalog = catalog
        self.journal = journal
        self.candidates = candidates
        approximate = candidates.neighbourStore == nil ? ApproximateIndex(files: configuration.graphFiles) : nil
        vectorFiles = candidates.neighbourStore == nil ? configuration.graphFiles.map(VectorFiles.init(beside:)) : nil
        self.engagementSource = engagement
        self.configuration = configuration
        let cacheDirectory = configuration.queryCacheDirectory
            ?? (NSTemporaryDirectory() as NSString).appendingPathComponent("vsearch-query-cache")
        loader = QueryImageLoader(policy: configuration.imageSources, cache: QueryImageCache(directory: cacheDirectory), limits: configuration.limits)
        jobs = InsertJobs(indexer: Indexer(store: catalog, configuration: configuration.insertIndexing), journal: journal, loader: loader,
                          versionCheck: versionCheck, limits: configuration.inserts)
        _ = try await snapshot()
    }

    /// The store when it runs k-NN itself.
    var neighbourStore: (any NearestNeighbourStore)? { candidates.neighbourStore }

    /// The current schema, and the in-memory index when `withIndex` (always
    /// on a store without k-NN of its own); reloaded when the catalog changed.
    func snapshot(withIndex: Bool = false) async throws(VisualSearchError) -> Snapshot {
        let needsIndex = withIndex || neighbourStore == nil
        let now = ContinuousClock.now
        if versionCheck.isFresh(at: now, interval: configuration.versionCheckInterval),
           let current = state.withLock({ $0 }), current.index != nil || !needsIndex {
            return current
        }
        let version = try await fromStore { () async throws(CatalogStoreError) in try await catalog.version() }
        versionCheck.record(now)
        if let current = state.withLock({ $0 }), current.version == version, current.index != nil || !needsIndex { return current }
        let learnedModel = try await fromStore { () async throws(CatalogStoreError) in try await catalog.learnedModel() }
        var index: FeatureIndex?
        var freshVersion = version
        var applied: (changes: CatalogChanges, base: Int)?
        if needsIndex {
            // Caught up by the catalog's changes when it logs them (an insert into a large catalog then
            // costs its own rows, not a reload of every one), else loaded again.
            if let current = state.withLock({ $0 }), let old = current.index, current.learnedModel == learnedModel,
               let caughtUp = try await applyingChanges(to: old, since: current.version) {
                (index, freshVersion) = (caughtUp.index, caughtUp.changes.version)
                applied = (caughtUp.changes, current.version)
            } else {
                index = try await loadIndex(version: version, model: learnedModel)
            }
        }
        let fresh = Snapshot(version: freshVersion, schema: try await fromStore { () async throws(CatalogStoreError) in try await catalog.schema() }, learnedModel: learnedModel, index: index)
        if let index = fresh.index, neighbourStore == nil {
            await updateGraphs(to: index, version: freshVersion, model: fresh.learnedModel?.tag, changes: applied)
        }
        state.withLock { $0 = fresh }
        return fresh
    }

    /// Brings the HNSW graphs in step with a freshly loaded index before it
    /// answers (``ApproximateIndex/update(to:version:model:policy:)``), when
    /// the catalog is one `auto` or `approximate` would use them on, or has
    /// graphs saved. A failure is reported and leaves the queries exact.
    func updateGraphs(to index: FeatureIndex, version: Int, model: String?, changes: (changes: CatalogChanges, base: Int)? = nil) async {
        guard let approximate else { return }
        let settings = configuration.nearestNeighbours
        let wanted = settings.mode == .approximate || (settings.mode == .auto && index.count > settings.exactBelow)
        guard wanted || approximate.version != nil || approximate.files?.manifest(.color) != nil else { return }
        do {
            let report = try await approximate.update(to: index, version: version, model: model, policy: configuration.graphPolicy,
                                                      changes: changes?.changes, from: changes?.base)
            configuration.graphReports?(.success(report))
        } catch {
            configuration.graphReports?(.failure(error))
        }
    }

    /// Rebuilds the HNSW graphs that hold more removed rows than
    /// ``Configuration/graphPolicy`` allows (``ApproximateIndex/compact(policy:)``):
    /// searches go on with the old graphs meanwhile. Reported to
    /// ``Configuration/graphReports`` when something was due. Cancelling the
    /// calling task stops a rebuild within about a thousand rows (the old graph stays).
    /// - Returns: what was rebuilt; nil when nothing was due, the store runs k-NN itself, or it failed.
    @discardableResult
    public func compactGraphs() async -> ApproximateIndex.Report? {
        guard let approximate, !compactionStop.isRaised,
              !approximate.spacesToCompact(policy: configuration.graphPolicy).isEmpty else { return nil }
        let stop = StopSignal(), stopped = compactionStop
        var policy = configuration.graphPolicy
        policy.progress = { _, _, _ in !stop.isRaised && !stopped.isRaised }  // no progress lines: it runs in the background
        let result: Result<ApproximateIndex.Report, HNSWGraphError> = await withTaskCancellationHandler {
            do throws(HNSWGraphError) { return .success(try await approximate.compact(policy: policy)) } catch { return .failure(error) }
        } onCancel: { stop.raise() }
        switch result {
        case .success(let report):
            guard !report.spaces.isEmpty else { return nil }
            configuration.graphReports?(.success(report))
            return report
        case .failure(let error):
            guard !stop.isRaised && !stopped.isRaised else { return nil }  // stopped: not a failure to report
            var report = ApproximateIndex.Report()
            report.compactionFailure = error.message
            configuration.graphReports?(.success(report))
            return nil
        }
    }

    /// Stops a compaction running (within about a thousand rows; its graph
    /// stays the old one) and any later one: a server calls it as it stops,
    /// before it saves the graphs.
    public func stopCompacting() {
        compactionStop.raise()
    }

    /// Saves the HNSW graphs when they changed since last saved (a server's
    /// shutdown, the end of `vsearch index`): between saves a server keeps
    /// them caught up in memory, and a restart catches the saved ones up.
    public func saveGraphs() async throws(VisualSearchError) {
        guard let approximate else { return }
        let model = state.withLock { $0?.learnedModel?.tag }
        do throws(HNSWGraphError) {
            try await approximate.save(model: model)
        } catch {
            throw .storage(reason: "cannot save the HNSW index in \(approximate.files?.directory ?? "memory"): \(error.message)", sql: nil)
        }
        try await saveVectors()
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
        let mode = try similarityMode(for: request.parameters, snapshot: snapshot, embeds: false)
        let image = try await catalogImage(named: request.imageName, snapshot: snapshot)
        return try await similar(to: try image.query(mode: mode, fusedWeight: configuration.fusedWeight), excluding: nil, method: "search",
                                 parameters: request.parameters, snapshot: snapshot)
    }

    public func recommendations(_ request: RecommendationsRequest) async throws(VisualSearchError) -> SearchResponse {
        let snapshot = try await snapshot()
        let mode = try similarityMode(for: request.parameters, snapshot: snapshot, embeds: false)
        let image = try await catalogImage(named: request.imageName, snapshot: snapshot)
        var parameters = request.parameters
        parameters.deduplicates = true
        let blend = try await blendTerms(for: request.imageName, parameters: parameters)
        return try await similar(to: try image.query(mode: mode, fusedWeight: configuration.fusedWeight), excluding: image,
                                 method: "recommendations", parameters: parameters, snapshot: snapshot, blend: blend)
    }

    public func uploadSearch(_ request: UploadSearchRequest) async throws(VisualSearchError) -> SearchResponse {
        let snapshot = try await snapshot()
        let mode = try similarityMode(for: request.parameters, snapshot: snapshot, embeds: true)
        if let detection = request.parameters.detection, let detector = configuration.detector {
            return try await detectingUploadSearch(request, detection: detection, detector: detector, mode: mode, snapshot: snapshot)
        }
        let (bytes, query) = try await queryFeatures(request.query, learned: mode.usesLearnedVectors)
        var response = try await similar(to: vectors(query, mode: mode), excluding: nil, method: "uploadsearch",
                                         parameters: request.parameters, snapshot: snapshot)
        response.imageID = loader.cache.store(bytes)
        if request.parameters.detection != nil {
            response.productTypes = []
            response.productTypesList = []
            response.offlineNote = Self.detectionNeedsModel
        }
        return response
    }

    /// Find similar by a vector computed elsewhere: a ``ColorFeatures`` vector
    /// (`similarity` `.color`), or a learned one in the space of the catalog's
    /// model (`.visual`; no model is needed to search with it); the filters,
    /// ranking and response of ``search(_:)``. Used by the benchmarks (`vsearch debug query-vectors`).
    public func vectorSearch(_ vector: [Float], similarity: SimilarityMode = .color,
                             parameters: SearchParameters = SearchParameters()) async throws(VisualSearchError) -> SearchResponse {
        let snapshot = try await snapshot()
        let query: QueryVectors
        switch similarity {
        case .color:
            guard vector.count == ColorFeatures.dimensions else {
                throw .invalidParameter(name: "vector", reason: "\(vector.count) floats, expected \(ColorFeatures.dimensions)")
            }
            query = QueryVectors(mode: .color, color: [vector], learned: nil, fusedWeight: configuration.fusedWeight)
        case .visual:
            guard let model = snapshot.learnedModel else {
                throw .learnedModel(.notIndexed, reason: "the catalog holds no learned vectors (similarity=visual)")
            }
            guard vector.count == model.dimension else {
                throw .invalidParameter(name: "vector", reason: "\(vector.count) floats, the catalog's model (\(model.tag)) makes \(model.dimension)")
            }
            // Visual scores use the learned vector only; the colour slot is never read.
            query = QueryVectors(mode: .visual, color: [[Float](repeating: 0, count: ColorFeatures.dimensions)], learned: [vector],
                                 fusedWeight: configuration.fusedWeight)
        case .fused:
            throw .invalidParameter(name: "similarity", reason: "a vector search is color or visual: fused needs both vectors of one image")
        }
        var parameters = parameters
        parameters.similarity = similarity
        return try await similar(to: query, excluding: nil, method: "search", parameters: parameters, snapshot: snapshot)
    }

    public func colorSearch(_ request: ColorSearchRequest) async throws(VisualSearchError) -> SearchResponse {
        let parameters = request.parameters
        try parameters.validate()
        let snapshot = try await snapshot(withIndex: true)
        let candidates = try await colorsInMemory(LabColor(request.color), parameters: parameters, snapshot: snapshot)
        return try await respond(candidates, method: "colorsearch", parameters: parameters, snapshot: snapshot)
    }

    /// Results for each object of the image: the `box` and each `point` (or
    /// the whole image), at most `detection_limit`. The image is decoded once
    /// for all of them (``FeaturePipeline/queries(_:boxes:plans:source:shouldStop:described:)``);
    /// when the caller's task is cancelled (its request was answered, or its
    /// deadline passed) the work stops between two objects — described or
    /// searched — and the call throws ``VisualSearchError/overloaded(reason:retryAfter:)``.
    public func discoverSearch(_ request: DiscoverSearchRequest) async throws(VisualSearchError) -> SearchResponse {
        let snapshot = try await snapshot()
        let prepared: DiscoverSearchRequest
        var scale = 1.0
        do { prepared = try request.prepared(limits: configuration.limits) { scale = $0 } } catch { throw .image(error) }
        let parameters = prepared.effectiveParameters
        try parameters.validate()
        let mode = try similarityMode(for: parameters, snapshot: snapshot, embeds: true)
        let bytes = try await loader.load(prepared.query.image)
        if let detector = configuration.detector, prepared.query.box?.isPoint ?? true {
            let response = try await detectingDiscoverSearch(prepared, bytes: bytes, detector: detector, parameters: parameters, mode: mode,
                                                             snapshot: snapshot)
            return noticingModel(response, parameters: parameters, snapshot: snapshot).boxesInCallerPixels(preparedAt: scale)
        }
        var regions: [PixelBox?] = ([prepared.query.box] + prepared.points.map { Optional($0.box) }).filter { $0 != nil }
        if regions.isEmpty { regions = [nil] }
        if let limit = prepared.detectionLimit { regions = Array(regions.prefix(limit)) }
        let queries = try await features(of: bytes, boxes: regions, learned: mode.usesLearnedVectors)
        var objects: [SearchObject] = []
        for (region, query) in zip(regions, queries) {
            if Task.isCancelled { break }
            let rendered = try await similar(to: vectors(query, mode: mode), excluding: nil, method: "discoversearch",
                                             parameters: parameters, snapshot: snapshot)
            objects.append(SearchObject(type: region == nil ? "image" : (region?.isPoint == true ? "point" : "box"),
                                        score: 1, box: query.region.wireBox,
                                        total: rendered.total, result: rendered.result, facets: rendered.facets))
        }
        guard objects.count == regions.count, !Task.isCancelled else {
            throw .overloaded(reason: "the request ended after \(objects.count) of its \(regions.count) objects were searched", retryAfter: 1)
        }
        let response = SearchResponse(method: "discoversearch", page: parameters.page, limit: parameters.limit,
                                      total: objects.reduce(0) { $0 + $1.total }, result: [], requestID: RequestID.make(),
                                      imageID: loader.cache.store(bytes), productTypes: [], objects: objects,
                                      offlineNote: configuration.detector == nil ? Self.detectionNeedsModel : Self.offlineDetectionNote,
                                      similarity: mode)
        return noticingModel(response, parameters: parameters, snapshot: snapshot).boxesInCallerPixels(preparedAt: scale)
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

    /// Accepts an insert transaction and returns its `trans_id` at once; the
    /// transaction runs in ``runInserts()``, which the engine's owner runs (a
    /// server does; a command line wraps its work in ``withInserts(_:)``).
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

    /// Runs the insert transactions ``insert(_:)`` accepts, each as a child
    /// task of this call, until the task running it is cancelled: then each
    /// stops between two batches and saves its progress (what ran is
    /// committed; re-sending the insert finishes the rest), the waiting ones
    /// are dropped, and it returns once every one has saved. The engine's
    /// owner runs it (a server's `EngineUpkeep`, ``withInserts(_:)``); a
    /// transaction accepted while nothing runs it waits for the next run.
    public func runInserts() async {
        await jobs.run()
    }

    /// Runs `body` with this engine's insert transactions running
    /// (``runInserts()``, in a child task); when `body` returns, the
    /// transactions still running stop between batches and save their
    /// progress (``finishInserts()`` in `body` waits for them to finish).
    /// For a command line or a test, which have no server to own the engine's work.
    public func withInserts<T, Failure: Error>(_ body: () async throws(Failure) -> T) async throws(Failure) -> T {
        let outcome: Result<T, Failure> = await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.runInserts() }
            let outcome: Result<T, Failure>
            do throws(Failure) { outcome = .success(try await body()) } catch { outcome = .failure(error) }
            group.cancelAll()
            return outcome
        }
        return try outcome.get()
    }

    /// Waits until the insert transactions running in this process have
    /// finished and saved their progress: a command line's insert ends
    /// with its work, where a server's returns at once.
    public func finishInserts() async {
        await jobs.finishAll()
    }

    public func insertStatus(_ request: InsertStatusRequest) async throws(VisualSearchError) -> InsertStatusResponse {
        guard let progress = try await jobs.status(request.transactionID) else {
            throw .invalidParameter(name: "trans_id", reason: "no insert transaction \(request.transactionID) in this catalog")
        }
        return InsertStatusResponse(result: [progress])
    }

    public func remove(_ request: RemoveRequest) async throws(VisualSearchError) -> DataAPIResponse {
        for (index, name) in request.imageNames.enumerated() { try CatalogText.validateName(name, parameter: "im_name[\(index)]") }
        let missing = try await absentNames(request.imageNames)
        let removed = try await fromStore { () async throws(CatalogStoreError) in try await catalog.remove(request.imageNames) }
        versionCheck.forget()
        // A name the catalog did not have is listed, as an insert lists the items it refused.
        let errors = request.imageNames.enumerated().filter { missing.contains($0.element) }.map {
            DataAPIError(imageName: $0.element, index: $0.offset, code: nil, message: "not in the catalog")
        }
        return DataAPIResponse(status: errors.isEmpty ? .ok : .warning, method: "remove", total: removed, error: errors)
    }

    /// Which of `names` the catalog does not hold (its vectors in memory, or the store that runs k-NN).
    func absentNames(_ names: [String]) async throws(VisualSearchError) -> Set<String> {
        if let neighbourStore {
            // One query for all the names (the store's `im_name = ANY(…)`), not one per name.
            let present = try await fromStore { () async throws(CatalogStoreError) in try await neighbourStore.sources(of: Array(Set(names))) }
            return Set(names.filter { present[$0] == nil })
        }
        guard let index = try await snapshot().index else { return Set(names) }
        return Set(names.filter { index.row(named: $0) == nil })
    }

    // MARK: - Stages

    /// The query image's bytes (prepared as the SDKs upload it, when the request asks) and its features.
    func queryFeatures(_ query: ImageQuery, learned: Bool) async throws(VisualSearchError) -> ([UInt8], QueryFeatures) {
        let prepared: ImageQuery
        do { prepared = try query.prepared(limits: configuration.limits) } catch { throw .image(error) }
        let bytes = try await loader.load(prepared.image)
        return (bytes, try await features(of: bytes, box: prepared.box, learned: learned))
    }

    /// A query image's vectors (learned ones too when `learned`): planned
    /// from its header (limits checked before anything is decoded), then
    /// decoded and embedded where ``Configuration/imageWork`` says.
    func features(of bytes: [UInt8], box: PixelBox?, learned: Bool) async throws(VisualSearchError) -> QueryFeatures {
        let pipeline = configuration.features(learned: learned)
        let plan: QueryPlan
        do { plan = try pipeline.plan(bytes, box: box) } catch { throw .image(error) }
        let work: @Sendable () throws(VisualSearchError) -> QueryFeatures = { () throws(VisualSearchError) -> QueryFeatures in
            do throws(FeaturesError) { return try pipeline.query(bytes, box: box, plan: plan) } catch { throw error.searchError }
        }
        guard let pool = configuration.imageWork else { return try work() }
        return try await pool.run(pixels: plan.decodedPixels, searching: work)
    }

    /// The query vectors of several regions of one image, decoded once, on
    /// ``Configuration/imageWork`` under the pixel budget of that one decode.
    /// Stops between regions once the caller's task is cancelled, returning
    /// those described so far (fewer than `boxes`).
    func features(of bytes: [UInt8], boxes: [PixelBox?], learned: Bool) async throws(VisualSearchError) -> [QueryFeatures] {
        let pipeline = configuration.features(learned: learned)
        var plans: [QueryPlan] = []
        do {
            for box in boxes { plans.append(try pipeline.plan(bytes, box: box)) }
        } catch {
            throw .image(error)
        }
        guard !plans.isEmpty else { return [] }
        let progress = configuration.discoverProgress, count = boxes.count, frozenPlans = plans
        let stop = StopSignal()
        let work: @Sendable () throws(VisualSearchError) -> [QueryFeatures] = { () throws(VisualSearchError) -> [QueryFeatures] in
            do throws(FeaturesError) {
                return try pipeline.queries(bytes, boxes: boxes, plans: frozenPlans,
                                            shouldStop: { stop.isRaised }, described: { progress?($0, count) })
            } catch {
                throw error.searchError
            }
        }
        let outcome: Result<[QueryFeatures], VisualSearchError> = await withTaskCancellationHandler {
            do throws(VisualSearchError) {
                guard let pool = configuration.imageWork else { return .success(try work()) }
                return .success(try await pool.run(pixels: QueryPlan(covering: frozenPlans).decodedPixels, searching: work))
            } catch {
                return .failure(error)
            }
        } onCancel: {
            stop.raise()
        }
        return try outcome.get()
    }

    /// A query image's features as the vectors `mode` scores with.
    func vectors(_ features: QueryFeatures, mode: SimilarityMode) -> QueryVectors {
        QueryVectors(mode: mode, color: features.vectors, learned: features.learned, fusedWeight: configuration.fusedWeight)
    }

    /// The similarity a request is answered with (its own, the engine's, or
    /// the catalog's default), checked against what the catalog holds and —
    /// when the query image must be embedded (`embeds`) — the model this engine has.
    /// - Throws: ``VisualSearchError/learnedModel(_:reason:)`` naming the fix.
    func similarityMode(for parameters: SearchParameters, snapshot: Snapshot, embeds: Bool) throws(VisualSearchError) -> SimilarityMode {
        let catalogModel = snapshot.learnedModel
        guard let mode = parameters.similarity else { return defaultSimilarity(catalogModel: catalogModel) }
        guard mode.usesLearnedVectors else { return mode }
        guard let catalogModel else {
            throw .learnedModel(.notIndexed, reason: "the catalog holds no learned vectors (similarity=\(mode)); index it again with the model "
                                + "installed (`\(EmbeddingError.installCommand)`, then `vsearch index`), or ask for similarity=color")
        }
        guard embeds else { return mode }
        guard let embedder = configuration.learned else {
            throw .learnedModel(.missing, reason: "this process has no learned model to embed the query image (similarity=\(mode)); "
                                + "install it with `\(EmbeddingError.installCommand)`, or ask for similarity=color")
        }
        guard embedder.descriptor.makesSameVectors(as: catalogModel) else {
            throw .learnedModel(.mismatch, reason: "the catalog's learned vectors were made by \(catalogModel.tag), this process has "
                                + "\(embedder.descriptor.tag); run `vsearch index` again to recompute them with this model, or install the catalog's model")
        }
        return mode
    }

    /// What a response says when the catalog holds learned vectors this
    /// engine cannot search with — no model installed, or another model — so
    /// a request naming no similarity was answered by colour: nil otherwise.
    /// The same words at serve's start and in `/health` (``learnedModelNotice(catalogModel:installed:)``).
    public func learnedModelNotice(catalogModel: EmbeddingDescriptor?) -> String? {
        Self.learnedModelNotice(catalogModel: catalogModel, installed: configuration.learned?.descriptor)
    }

    /// ``learnedModelNotice(catalogModel:)`` for a process whose installed model is `installed`.
    public static func learnedModelNotice(catalogModel: EmbeddingDescriptor?, installed: EmbeddingDescriptor?) -> String? {
        guard let catalogModel else { return nil }
        guard let installed else {
            return "the catalog holds learned vectors (\(catalogModel.tag)) but the learned model is not installed here: answered by colour "
                + "similarity; install it with `\(EmbeddingError.installCommand)`, or point VSEARCH_MODEL_DIR (or --model-dir) at it"
        }
        guard installed.makesSameVectors(as: catalogModel) else {
            return "the catalog's learned vectors were made by \(catalogModel.tag), the installed model is \(installed.tag): answered by colour "
                + "similarity; run `vsearch index` again to recompute them with this model, or install the catalog's model"
        }
        return nil
    }

    /// A response to a request that named no similarity, with ``learnedModelNotice(catalogModel:)``
    /// as its `similarity_note` when it was answered by colour for want of the catalog's model.
    /// Its status stays `OK`: every ViSearch SDK treats another status as a failure and drops the results.
    func noticingModel(_ response: SearchResponse, parameters: SearchParameters, snapshot: Snapshot) -> SearchResponse {
        guard parameters.similarity == nil, !(response.similarity?.usesLearnedVectors ?? false),
              let notice = learnedModelNotice(catalogModel: snapshot.learnedModel) else { return response }
        var response = response
        response.similarityNote = notice
        return response
    }

    /// The similarity of a request that names none: the configured one when it
    /// can answer, else ``defaultLearnedMode`` for a catalog whose learned
    /// vectors this engine's model made, else colour.
    public func defaultSimilarity(catalogModel: EmbeddingDescriptor?) -> SimilarityMode {
        let hasMatchingModel = configuration.learned.map { $0.descriptor.makesSameVectors(as: catalogModel) } ?? false
        if let configured = configuration.similarity, !configured.usesLearnedVectors || hasMatchingModel { return configured }
        return hasMatchingModel ? Self.defaultLearnedMode : .color
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
    func similar(to query: QueryVectors, excluding: CatalogImage?, method: String, parameters: SearchParameters,
                 snapshot: Snapshot, blend: BlendTerms? = nil) async throws(VisualSearchError) -> SearchResponse {
        try parameters.validate()
        let vectors = parameters.scoreMin != nil || parameters.scoreMax != nil ? query.primaryOnly : query
        let candidates = if let neighbourStore {
            try await nearestInStore(neighbourStore, to: vectors, excluding: excluding, parameters: parameters, snapshot: snapshot,
                                     blend: blend)
        } else {
            try await nearestInMemory(to: vectors, excluding: excluding, parameters: parameters, snapshot: snapshot, blend: blend)
        }
        var response = try await respond(candidates, method: method, parameters: parameters, snapshot: snapshot)
        response.similarity = query.mode
        return noticingModel(response, parameters: parameters, snapshot: snapshot)
    }

    /// Metadata and facets from the store, shaped into the response.
    func respond(_ candidates: Candidates, method: String, parameters: SearchParameters,
                 snapshot: Snapshot) async throws(VisualSearchError) -> SearchResponse {
        let shaper = ResponseShaper(parameters: parameters)
        let ids = candidates.ranked.page.map { candidates.rows.ids[$0.row] }
        let maps = shaper.wantsValues ? try await fromStore { () async throws(CatalogStoreError) in try await catalog.valueMaps(for: ids, fields: shaper.valueFields) } : [:]
        var facets: Result<[Facet], VisualSearchError>?
        if !parameters.facets.isEmpty {
            do {
                let aggregates = switch candidates.facetScope {
                case .ids(let ids):
                    try await catalog.facetCounts(parameters.facets, schema: snapshot.schema, ids: ids, limit: parameters.facetsLimit)
                case .scope(let scope):
                    try await neighbourStore?.facetCounts(parameters.facets, schema: snapshot.schema, scope: scope,
                                                          limit: parameters.facetsLimit) ?? []
                }
                facets = .success(FacetShaper.facets(aggregates, showCount: parameters.facetsShowCount))
            } catch {
                facets = .failure(VisualSearchError(error))
            }
        }
        var response = shaper.searchResponse(method: method, ranked: candidates.ranked, rows: candidates.rows,
                                             valueMaps: maps, facets: facets, requestID: RequestID.make())
        // An `fl` naming no declared field returns no value for it: a warning, as an unknown facet field gets.
        // One message for all of them, the declared fields listed once.
        let unknown = parameters.fields.filter { $0 != "*" && snapshot.schema.fields[$0] == nil }
        if !unknown.isEmpty {
            response.status = .warning
            var seen = Set<String>()
            let names = unknown.filter { seen.insert($0).inserted }
            response.error.append("fl: " + VisualSearchError.unknownField(names.joined(separator: ", "), known: snapshot.schema.fields.keys.sorted()).message)
        }
        return response
    }
}
