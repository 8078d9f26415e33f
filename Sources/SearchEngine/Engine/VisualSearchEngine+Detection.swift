import Foundation
import ImageOps
import VisualSearch

/// Object detection in discover and upload search (``ObjectDetector``): the
/// query image is decoded once, its objects found, and each one's vectors
/// made from the same decode (the learned vector from the crop the detector
/// classified).
extension VisualSearchEngine {
    /// One object of a query image and what it is searched with.
    struct QueryObject: Sendable {
        var type: String
        var score: Float
        /// The searched region, in the image's upright pixels.
        var region: PixelRect
        var features: QueryFeatures
        /// Whether the object is the whole picture (nothing separate was found, or one object fills it).
        var isWhole: Bool
    }

    /// The longer side a query image is decoded at for detection.
    static let detectionSide = 1024

    /// What is said in a response when object detection was asked for and this engine has no detector.
    public static let detectionNeedsModel = "object detection needs the learned model, which is not installed here; the whole image, "
        + "or each box or point given, is treated as one object (install it with `\(EmbeddingError.installCommand)`)"

    /// The objects of a query image, best first, at most `limit`, each with
    /// its vectors; with `points`, for each point the object under it (the
    /// best-scored detected box holding the point; none: the point's
    /// neighbourhood, as ``PixelBox/region(in:)`` selects). Runs on
    /// ``Configuration/imageWork`` under the decode's pixel budget; stops
    /// between objects once the caller's task is cancelled.
    func detectedObjects(in bytes: [UInt8], detector: ObjectDetector, limit: Int, points: [PixelPoint] = [])
        async throws(VisualSearchError) -> [QueryObject] {
        let pipeline = configuration.features.with(learned: detector.embedder)
        let plan: QueryPlan
        do { plan = try pipeline.detectionPlan(bytes, side: Self.detectionSide) } catch {
            throw .image(error)
        }
        let stop = StopSignal()
        let work: @Sendable () throws(VisualSearchError) -> [QueryObject] = { () throws(VisualSearchError) -> [QueryObject] in
            do throws(FeaturesError) {
                return try Self.detect(bytes, plan: plan, pipeline: pipeline, detector: detector, limit: limit, points: points,
                                       shouldStop: { stop.isRaised })
            } catch {
                throw error.searchError
            }
        }
        let outcome: Result<[QueryObject], VisualSearchError> = await withTaskCancellationHandler {
            do throws(VisualSearchError) {
                guard let pool = configuration.imageWork else { return .success(try work()) }
                return .success(try await pool.run(pixels: plan.decodedPixels, searching: work))
            } catch {
                return .failure(error)
            }
        } onCancel: {
            stop.raise()
        }
        return try outcome.get()
    }

    /// Decodes, detects and describes (on the calling thread).
    static func detect(_ bytes: [UInt8], plan: QueryPlan, pipeline: FeaturePipeline, detector: ObjectDetector, limit: Int,
                       points: [PixelPoint], shouldStop: () -> Bool) throws(FeaturesError) -> [QueryObject] {
        try FeaturesError.catching {
            let decoded = try pipeline.decode(bytes, plan: plan, source: "query image")
            let full = plan.header.size
            let whole = PixelRect(x: 0, y: 0, width: full.width, height: full.height)
            let outcome = try detector.detect(decoded.pixels, full: full, limit: points.isEmpty ? limit : max(limit, 30),
                                              shouldStop: shouldStop)
            func describeWhole(type: String, probability: Float, vector: [Float]) throws -> QueryObject {
                // The detector embedded the whole picture to type it: that vector is the search's too.
                let features = try pipeline.describeRegion(of: decoded.pixels, full: full, box: nil, region: whole, regionVector: vector)
                return QueryObject(type: type, score: probability, region: whole, features: features, isWhole: true)
            }
            func describe(_ detection: ObjectDetector.Detection) throws -> QueryObject {
                let region = detection.object.region
                let box = PixelBox(x1: region.x, y1: region.y, x2: region.x + region.width, y2: region.y + region.height)
                let features = try pipeline.describeRegion(of: decoded.pixels, full: full, box: box, region: region,
                                                           regionVector: detection.vector)
                return QueryObject(type: detection.object.type, score: detection.object.score, region: region, features: features, isWhole: false)
            }
            guard points.isEmpty else {
                let detections: [ObjectDetector.Detection]
                if case .objects(let found) = outcome { detections = found } else { detections = [] }
                var objects: [QueryObject] = []
                for point in points.prefix(limit) {
                    if shouldStop() { break }
                    let holding = detections.filter { $0.object.region.contains(x: point.x, y: point.y) }
                    if let best = holding.first {
                        objects.append(try describe(best))
                        continue
                    }
                    if case .whole(let type, let probability, let vector) = outcome {
                        objects.append(try describeWhole(type: type, probability: probability, vector: vector))
                        continue
                    }
                    // Nothing detected under the point: its neighbourhood, as without a detector.
                    let box = PixelBox(x1: point.x, y1: point.y, x2: point.x, y2: point.y)
                    let region = try box.region(in: full)
                    let features = try pipeline.describeRegion(of: decoded.pixels, full: full, box: box, region: region)
                    objects.append(QueryObject(type: "point", score: 0, region: region, features: features, isWhole: false))
                }
                return objects
            }
            switch outcome {
            case .whole(let type, let probability, let vector):
                return [try describeWhole(type: type, probability: probability, vector: vector)]
            case .objects(let detections):
                var objects: [QueryObject] = []
                for detection in detections.prefix(limit) {
                    if shouldStop() { break }
                    objects.append(try describe(detection))
                }
                return objects
            }
        }
    }

    /// Objects a discover search reports when its request names no `detection_limit` (the hosted service's default).
    public static let defaultDetectionLimit = 5
    /// The most objects one discover search reports (``DiscoverSearchRequest/maximumDetectionLimit``).
    public static let maximumDetectionLimit = DiscoverSearchRequest.maximumDetectionLimit

    /// Discover search with the detector: each detected object (or, for each
    /// `point`, the object under it) searched with its own vectors.
    func detectingDiscoverSearch(_ prepared: DiscoverSearchRequest, bytes: [UInt8], detector: ObjectDetector, parameters: SearchParameters,
                                 mode: SimilarityMode, snapshot: Snapshot) async throws(VisualSearchError) -> SearchResponse {
        if let asked = prepared.detectionLimit, !(1...Self.maximumDetectionLimit).contains(asked) {
            throw .invalidParameter(name: "detection_limit", reason: "\(asked) is not in 1...\(Self.maximumDetectionLimit) (the hosted service's range)")
        }
        // A zero-size box is a point, as the guide says: the object under it.
        let points = prepared.points + (prepared.query.box.flatMap { $0.isPoint ? [PixelPoint(x: $0.x1, y: $0.y1)] : nil } ?? [])
        let limit = min(Self.maximumDetectionLimit, prepared.detectionLimit ?? (points.isEmpty ? Self.defaultDetectionLimit : points.count))
        let found = try await detectedObjects(in: bytes, detector: detector, limit: limit, points: points)
        var objects: [SearchObject] = []
        for object in found {
            if Task.isCancelled { break }
            let rendered = try await similar(to: vectors(object.features, mode: mode), excluding: nil, method: "discoversearch",
                                             parameters: parameters, snapshot: snapshot)
            objects.append(SearchObject(type: object.type, score: object.score, box: object.region.wireBox,
                                        total: rendered.total, result: rendered.result, facets: rendered.facets))
        }
        guard objects.count == found.count, !Task.isCancelled else {
            throw .overloaded(reason: "the request ended after \(objects.count) of its \(found.count) objects were searched", retryAfter: 1)
        }
        return SearchResponse(method: "discoversearch", page: parameters.page, limit: parameters.limit,
                              total: objects.reduce(0) { $0 + $1.total }, result: [], requestID: RequestID.make(),
                              imageID: loader.cache.store(bytes), objects: objects, objectTypesList: Self.productTypesList, similarity: mode)
    }

    /// Upload search with `detection=all` (the best object searched) or
    /// `detection={type}` (the best object of that type; when none is found,
    /// the whole image, as without detection); `product_types` lists the
    /// objects found, best first. A point box searches the object under the
    /// point; any other box is searched as given, with the objects found inside it listed.
    func detectingUploadSearch(_ request: UploadSearchRequest, detection: String, detector: ObjectDetector, mode: SimilarityMode,
                               snapshot: Snapshot) async throws(VisualSearchError) -> SearchResponse {
        let prepared: ImageQuery
        var scale = 1.0
        do { prepared = try request.query.prepared(limits: configuration.limits) { scale = $0 } } catch { throw .image(error) }
        let bytes = try await loader.load(prepared.image)
        let wanted = detection.trimmingCharacters(in: .whitespaces).lowercased()
        let points = prepared.box.flatMap { $0.isPoint ? [PixelPoint(x: $0.x1, y: $0.y1)] : nil } ?? []
        let found = try await detectedObjects(in: bytes, detector: detector, limit: points.isEmpty ? Self.maximumDetectionLimit : 1, points: points)
        var listed = found
        if let box = prepared.box, !box.isPoint {
            let inside = PixelRect(x: box.x1, y: box.y1, width: max(1, box.x2 - box.x1), height: max(1, box.y2 - box.y1))
            listed = found.filter { !$0.isWhole && $0.region.share(inside: inside) >= 0.5 }
        }
        let searched: QueryFeatures
        if let box = prepared.box, !box.isPoint {
            searched = try await features(of: bytes, box: box, learned: mode.usesLearnedVectors)
        } else if let best = (wanted == "all" ? listed.first : listed.first { $0.type.lowercased() == wanted }) {
            searched = best.features
        } else {
            searched = try await features(of: bytes, box: nil, learned: mode.usesLearnedVectors)
        }
        var response = try await similar(to: vectors(searched, mode: mode), excluding: nil, method: "uploadsearch",
                                         parameters: request.parameters, snapshot: snapshot)
        response.imageID = loader.cache.store(bytes)
        response.productTypes = listed.map { VisualSearch.ProductType(type: $0.type, score: $0.score, box: $0.region.wireBox) }
        response.productTypesList = Self.productTypesList
        return response.boxesInCallerPixels(preparedAt: scale)
    }

    /// Every type the detector can name, as `product_types_list` lists them.
    static var productTypesList: [ProductTypeListing] {
        ProductTypes.vocabulary.map { ProductTypeListing(type: $0.name) }
    }
}
