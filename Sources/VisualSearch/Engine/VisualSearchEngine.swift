import Foundation
import ImageOps
import Synchronization

/// The offline engine: answers ViSearch and ProductSearch requests from a
/// local ``Catalog`` with colour-histogram similarity, with the same
/// parameters and response shapes as the hosted services — so an app can be
/// built and tested with no account and no network.
///
/// How a query runs: features of the query (stored for an `im_name`,
/// computed for an upload, or a colour) → `fq` filters in SQL (indexed) →
/// a SIMD scan of the survivors' vectors in memory → scores → the score
/// range → dedup → the page → `value_map` and facets from SQL.
///
/// The in-memory index is loaded once and reloaded when the catalog's
/// version counter moves (another process indexed or removed images).
/// Thread-safe: queries may run concurrently.
///
/// ```swift
/// let engine = try VisualSearchEngine(catalog: Catalog(path: "catalog.sqlite"))
/// var parameters = SearchParameters()
/// parameters.includesScore = true
/// let response = try engine.search(imageName: "chelsea_cat", parameters: parameters)
/// response.result.first?.imageName
/// ```
public final class VisualSearchEngine: Sendable {
    /// The catalog queried.
    public let catalog: Catalog
    /// Limits for uploaded query images.
    public let limits: ImageLimits
    let cache: QueryImageCache
    let state: Mutex<Snapshot?>

    /// What the engine says about objects in discover search.
    public static let offlineDetectionNote =
        "offline engine: no object detector; the whole image, or each box or point given, is treated as one object"

    struct Snapshot: Sendable {
        var version: Int
        var index: FeatureIndex
        var schema: FieldSchema
    }

    /// Creates an engine and loads the catalog's vectors.
    public init(catalog: Catalog, limits: ImageLimits = .default) throws(VisualSearchError) {
        self.catalog = catalog
        self.limits = limits
        cache = QueryImageCache(directory: ((catalog.path as NSString).deletingLastPathComponent as NSString)
            .appendingPathComponent("query-cache"))
        state = Mutex(nil)
        _ = try snapshot()
    }

    /// The current index and schema, reloaded if the catalog changed.
    func snapshot() throws(VisualSearchError) -> Snapshot {
        let version = try catalog.version()
        if let current = state.withLock({ $0 }), current.version == version { return current }
        let fresh = Snapshot(version: version, index: try catalog.loadIndex(), schema: try catalog.schema())
        state.withLock { $0 = fresh }
        return fresh
    }

    /// Where a catalog image came from (its indexed path or URL), from the in-memory index.
    public func source(of imageName: String) -> String? {
        guard let snapshot = try? snapshot(), let row = snapshot.index.row(named: imageName) else { return nil }
        return snapshot.index.sources[row]
    }

    // MARK: - ViSearch endpoints

    /// `/search`: images similar to a catalog image (the image itself included, with score 1).
    public func search(imageName: String, parameters: SearchParameters) throws(VisualSearchError) -> SearchResponse {
        let snapshot = try snapshot()
        guard let row = snapshot.index.row(named: imageName) else { throw .imageNotFound(imageName) }
        let ranked = try rank(snapshot, parameters: parameters, query: snapshot.index.vector(at: row), excluding: nil)
        return render(ranked, method: "search", snapshot: snapshot, parameters: parameters)
    }

    /// `/recommendations`: similar items for a catalog image, the image itself
    /// excluded and near-duplicates removed (dedup is always on here).
    public func recommendations(imageName: String, parameters: SearchParameters) throws(VisualSearchError) -> SearchResponse {
        let snapshot = try snapshot()
        guard let row = snapshot.index.row(named: imageName) else { throw .imageNotFound(imageName) }
        var parameters = parameters
        parameters.deduplicates = true
        let ranked = try rank(snapshot, parameters: parameters, query: snapshot.index.vector(at: row), excluding: row)
        return render(ranked, method: "recommendations", snapshot: snapshot, parameters: parameters)
    }

    /// `/uploadsearch`: images similar to an uploaded image (bytes, file, URL
    /// or an earlier `im_id`), optionally inside a box of it (a zero-size box
    /// is a point: its neighbourhood is searched). The response carries the
    /// `im_id` under which the query image is cached.
    public func uploadSearch(_ image: QueryImage, box: PixelBox? = nil,
                             parameters: SearchParameters) throws(VisualSearchError) -> SearchResponse {
        let snapshot = try snapshot()
        let bytes = try image.load(cache: cache, limits: limits)
        let query = try VisualSearchEngine.features(of: bytes, box: box, limits: limits)
        let imageID = cache.store(bytes)
        let ranked = try rank(snapshot, parameters: parameters, query: query.vector, excluding: nil)
        var response = render(ranked, method: "uploadsearch", snapshot: snapshot, parameters: parameters)
        response.imageID = imageID
        if parameters.detection != nil { response.productTypes = [] }
        return response
    }

    /// `/colorsearch`: images ranked by how much of them is near a colour
    /// (`ff00ff`, `#f0f`); the score is that coverage, 0...1.
    public func colorSearch(_ hex: String, parameters: SearchParameters) throws(VisualSearchError) -> SearchResponse {
        let color: LabColor
        do { color = try LabColor(hex: hex) } catch {
            throw .invalidParameter(name: "color", reason: "\"\(hex)\" is not a hex colour such as ff00ff or #f0f")
        }
        let snapshot = try snapshot()
        let ranked = try rank(snapshot, parameters: parameters) { rows in
            (rows ?? Array(0..<snapshot.index.count)).map { snapshot.index.palettes[$0].coverage(of: color) }
        }
        return render(ranked, method: "colorsearch", snapshot: snapshot, parameters: parameters)
    }

    /// `/discoversearch`: the offline engine has no detector, so the whole
    /// image — or each box or point given — is one object, each with its own
    /// results; ``SearchResponse/offlineNote`` says so.
    public func discoverSearch(_ image: QueryImage, boxes: [PixelBox] = [],
                               parameters: SearchParameters) throws(VisualSearchError) -> SearchResponse {
        let snapshot = try snapshot()
        let bytes = try image.load(cache: cache, limits: limits)
        let regions: [PixelBox?] = boxes.isEmpty ? [nil] : boxes
        var objects: [SearchObject] = []
        for region in regions {
            let query = try VisualSearchEngine.features(of: bytes, box: region, limits: limits)
            let ranked = try rank(snapshot, parameters: parameters, query: query.vector, excluding: nil)
            let rendered = render(ranked, method: "discoversearch", snapshot: snapshot, parameters: parameters)
            let rect = query.region
            objects.append(SearchObject(type: region == nil ? "image" : (region?.isPoint == true ? "point" : "box"),
                                        score: 1, box: [rect.x, rect.y, rect.x + rect.width, rect.y + rect.height],
                                        total: rendered.total, result: rendered.result, facets: rendered.facets))
        }
        return SearchResponse(method: "discoversearch", page: parameters.page, limit: parameters.limit,
                              total: objects.reduce(0) { $0 + $1.total }, result: [], requestID: VisualSearchEngine.newRequestID(),
                              imageID: cache.store(bytes), productTypes: [], objects: objects,
                              offlineNote: VisualSearchEngine.offlineDetectionNote)
    }

    // MARK: - ProductSearch endpoints

    /// `v1/product/search_by_image`, answered from the same catalog:
    /// `product_id` is the `im_name`, `data` the metadata.
    public func productSearch(byImage image: QueryImage, box: PixelBox? = nil,
                              parameters: SearchParameters) throws(VisualSearchError) -> ProductSearchResponse {
        var parameters = parameters
        parameters.includesScore = true
        let response = try uploadSearch(image, box: box, parameters: parameters)
        return try productResponse(response, method: "product/search_by_image")
    }

    /// `v1/product/recommendations/{product_id}`.
    public func productRecommendations(productID: String, parameters: SearchParameters) throws(VisualSearchError) -> ProductSearchResponse {
        var parameters = parameters
        parameters.includesScore = true
        let response = try recommendations(imageName: productID, parameters: parameters)
        var product = try productResponse(response, method: "product/recommendations")
        let snapshot = try snapshot()
        if let row = snapshot.index.row(named: productID) {
            product.productInfo = ProductSearchResponse.Product(productID: productID, mainImageURL: snapshot.index.sources[row])
        }
        return product
    }

    func productResponse(_ response: SearchResponse, method: String) throws(VisualSearchError) -> ProductSearchResponse {
        let snapshot = try snapshot()
        let products = response.result.map { result in
            ProductSearchResponse.Product(productID: result.imageName,
                                          mainImageURL: snapshot.index.row(named: result.imageName).map { snapshot.index.sources[$0] },
                                          score: result.score, data: result.valueMap?.mapValues { JSONValue.string($0) })
        }
        return ProductSearchResponse(requestID: response.requestID, status: .ok, method: method, imageID: response.imageID,
                                     page: response.page, limit: response.limit, total: response.total, productTypes: [],
                                     result: products, facets: response.facets)
    }

    // MARK: - Ranking

    struct Ranked {
        var rows: [(row: Int, score: Float)]
        var total: Int
        /// Catalog ids of every match, or nil when every image matched (facets over all).
        var matchedIDs: [Int64]?
    }

    /// Similarity ranking against a query vector.
    func rank(_ snapshot: Snapshot, parameters: SearchParameters, query: [Float], excluding: Int?) throws(VisualSearchError) -> Ranked {
        try rank(snapshot, parameters: parameters, excluding: excluding) { rows in
            snapshot.index.dotProducts(with: query, rows: rows).map(ColorFeatures.score(dot:))
        }
    }

    /// The shared pipeline: filters → scores → range → dedup → page.
    func rank(_ snapshot: Snapshot, parameters: SearchParameters, excluding: Int? = nil,
              scores: ([Int]?) -> [Float]) throws(VisualSearchError) -> Ranked {
        try parameters.validate()
        let index = snapshot.index
        let ids = try catalog.matchingIDs(parameters.filters, schema: snapshot.schema)
        let rows: [Int]? = ids.map { $0.compactMap { index.row(id: $0) }.sorted() }
        var values = scores(rows)
        if let excluding {
            if let rows {
                if let position = rows.firstIndex(of: excluding) { values[position] = -.infinity }
            } else {
                values[excluding] = -.infinity
            }
        }
        let low = parameters.scoreMin ?? 0, high = parameters.scoreMax ?? 1
        let keep: (Float) -> Bool = { $0 >= low && $0 <= high }
        var total = 0
        var matched: [Int64] = []
        let everythingMatches = ids == nil && excluding == nil && parameters.scoreMin == nil && parameters.scoreMax == nil
        for (i, value) in values.enumerated() where keep(value) {
            total += 1
            if !everythingMatches { matched.append(index.ids[rows?[i] ?? i]) }
        }
        let needed = parameters.page * parameters.limit
        let margin = parameters.deduplicates ? needed * 2 + 20 : 0
        var top = index.top(needed + margin, of: values, rows: rows, where: keep)
        if parameters.deduplicates {
            top = deduplicate(top, index: index, threshold: parameters.dedupScoreThreshold)
        }
        let start = min(top.count, (parameters.page - 1) * parameters.limit)
        let page = Array(top[start..<min(top.count, start + parameters.limit)]).map { (row: $0.row, score: $0.value) }
        return Ranked(rows: page, total: total, matchedIDs: everythingMatches ? nil : matched)
    }

    /// Drops results nearly identical (similarity ≥ threshold) to a better-ranked one.
    func deduplicate(_ ranked: [(row: Int, value: Float)], index: FeatureIndex, threshold: Float) -> [(row: Int, value: Float)] {
        var kept: [(row: Int, value: Float)] = []
        for candidate in ranked {
            let duplicate = kept.contains { other in
                ColorFeatures.score(dot: index.dot(candidate.row, other.row)) >= threshold
            }
            if !duplicate { kept.append(candidate) }
        }
        return kept
    }

    func render(_ ranked: Ranked, method: String, snapshot: Snapshot, parameters: SearchParameters) -> SearchResponse {
        let index = snapshot.index
        let ids = ranked.rows.map { index.ids[$0.row] }
        let wantsValues = parameters.returnsAllFields || !parameters.fields.isEmpty
        let maps = wantsValues ? ((try? catalog.valueMaps(for: ids, fields: parameters.returnsAllFields ? nil : parameters.fields)) ?? [:]) : [:]
        let results = ranked.rows.map { item in
            ImageResult(imageName: index.names[item.row],
                        score: parameters.includesScore ? (item.score * 1_000_000).rounded() / 1_000_000 : nil,
                        valueMap: wantsValues ? (maps[index.ids[item.row]] ?? [:]) : nil)
        }
        var facets: [Facet]?
        var errors: [String] = []
        if !parameters.facets.isEmpty {
            do {
                facets = try catalog.facets(parameters.facets, schema: snapshot.schema, ids: ranked.matchedIDs,
                                            limit: parameters.facetsLimit, showCount: parameters.facetsShowCount)
            } catch {
                errors.append(error.message)
            }
        }
        return SearchResponse(status: errors.isEmpty ? .ok : .warning, method: method, error: errors,
                              page: parameters.page, limit: parameters.limit,
                              total: ranked.total, result: results, requestID: VisualSearchEngine.newRequestID(), facets: facets)
    }

    // MARK: - Query features

    /// Features of an encoded image, inside `box` when given (in the image's
    /// upright pixels; clamped; a point selects its neighbourhood).
    public static func features(of bytes: [UInt8], box: PixelBox?,
                                limits: ImageLimits = .default) throws(VisualSearchError) -> (vector: [Float], region: PixelRect) {
        do {
            let header = try ImageDecoder.readHeader(bytes, source: "query image")
            let full = header.size
            let region = try box?.region(in: full) ?? PixelRect(x: 0, y: 0, width: full.width, height: full.height)
            // Decode just large enough that the region keeps ColorFeatures.workingSide pixels.
            let scale = min(1, Double(ColorFeatures.workingSide) / Double(max(region.width, region.height)))
            let minimum = PixelSize(width: max(1, Int((Double(full.width) * scale).rounded(.up))),
                                    height: max(1, Int((Double(full.height) * scale).rounded(.up))))
            let decoded = try ImageDecoder.decode(bytes, source: "query image", options: DecodingOptions(minimumSize: minimum, limits: limits))
            let sx = Double(decoded.pixels.width) / Double(full.width), sy = Double(decoded.pixels.height) / Double(full.height)
            let x = min(decoded.pixels.width - 1, Int(Double(region.x) * sx)), y = min(decoded.pixels.height - 1, Int(Double(region.y) * sy))
            let crop = PixelRect(x: x, y: y,
                                 width: max(1, min(decoded.pixels.width - x, Int((Double(region.width) * sx).rounded()))),
                                 height: max(1, min(decoded.pixels.height - y, Int((Double(region.height) * sy).rounded()))))
            let pixels = try ImageProcessors.Crop(crop).process(decoded.pixels)
            return (ColorFeatures.vector(of: pixels), region)
        } catch {
            throw .image(error)
        }
    }

    /// A request id like the hosted service's: a 19-digit number as a string.
    public static func newRequestID() -> String {
        String(UInt64.random(in: 1_000_000_000_000_000_000...9_999_999_999_999_999_999))
    }
}
