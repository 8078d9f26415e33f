import Foundation
import ImageOps

/// Finds the objects of a picture with the learned model alone: proposals
/// (``ForegroundProposals`` on a plain background, ``ActivationProposals`` on
/// a photograph), each classified from its crop by the model's ImageNet
/// classifier (one run of the embedding network per crop, which also gives
/// the crop's search vector), scored (``ScoreCalibration``), reduced by
/// ``NonMaximumSuppression`` and ranked.
///
/// A picture whose one object fills most of it (``Settings/wholeShare``), or
/// in which nothing is found, is one object: the whole picture, searched as
/// an upload search searches it (``Outcome/whole``).
public struct ObjectDetector: Sendable {
    public let model: DetectionModel
    public let embedder: LearnedEmbedder
    public var settings: Settings

    /// The detector's constants (chosen on the detection set's tune split: docs/decisions.md, "Object detection").
    public struct Settings: Sendable, Hashable {
        public var foreground = ForegroundProposals()
        public var activation = ActivationProposals()
        /// Proposals classified at most (each costs one run of the network).
        public var candidates = 8
        /// Intersection over union above which the lower-scored of two objects goes.
        public var overlap = 0.45
        /// The share of a box inside a better one above which it goes (a part of an object).
        public var containment = 0.8
        /// Objects scored below this are not reported.
        public var minimumScore: Float = 0.35
        /// A lone object covering this share of the picture is the whole picture.
        public var wholeShare = 0.55
        public var calibration = ScoreCalibration()

        public init() {}
    }

    /// What a picture holds.
    public enum Outcome: Sendable {
        /// Separate objects, best first, each with the learned vector of its crop.
        case objects([Detection])
        /// One object that is the whole picture (typed from the whole picture's classification).
        case whole(type: String, typeProbability: Float)
    }

    /// One detected object and the learned vector of its crop (what its search uses).
    public struct Detection: Sendable {
        public var object: DetectedObject
        public var vector: [Float]
    }

    /// A detector over `embedder`'s model.
    /// - Throws: ``EmbeddingError/modelDamaged(path:reason:)`` when the model has no detection parts.
    public init(embedder: LearnedEmbedder, settings: Settings = Settings()) throws(EmbeddingError) {
        self.embedder = embedder
        self.model = try DetectionModel(embedder: embedder)
        self.settings = settings
    }

    /// Loads the detection files now.
    public func load() throws(EmbeddingError) {
        try embedder.load()
        try model.load()
    }

    /// The objects of `image` (decoded, perhaps shrunk, from a picture of
    /// upright size `full`), at most `limit`; regions in `full`'s pixels.
    /// `shouldStop` is asked between crops.
    /// - Throws: ``EmbeddingError`` when the model cannot load or run.
    public func detect(_ image: PixelBuffer, full: PixelSize, limit: Int, shouldStop: () -> Bool = { false }) throws(EmbeddingError) -> Outcome {
        let head = try model.head()
        let size = image.size
        var proposals: [(region: PixelRect, strength: Float)]
        let plain: Bool
        if let found = settings.foreground.proposals(in: image) {
            plain = true
            proposals = found.map { ($0.region, Float($0.fill)) }
        } else {
            plain = false
            let map = try model.featureMap(of: image, longSide: settings.activation.inputSide)
            proposals = settings.activation.proposals(from: map, head: head, size: size).map { ($0.region, $0.strength) }
        }
        proposals = NonMaximumSuppression.select(proposals, region: \.region, score: \.strength, overlap: 0.8,
                                                 limit: settings.candidates)
        let area = Double(size.width * size.height)
        if proposals.isEmpty || (proposals.count == 1 && Double(proposals[0].region.width * proposals[0].region.height) >= settings.wholeShare * area) {
            return try whole(image, head: head)
        }
        var crops: [PixelBuffer] = []
        for proposal in proposals {
            if shouldStop() { break }
            guard let crop = try? ImageProcessors.Crop(proposal.region).process(image) else { continue }
            crops.append(crop)
        }
        guard crops.count == proposals.count else { return .objects([]) }
        let described = try embedder.embedWithFeatures(crops)
        var detections: [Detection] = []
        for (proposal, embedding) in zip(proposals, described) {
            let probabilities = head.probabilities(embedding.features)
            let best = ProductTypes.bestType(probabilities: probabilities)
            let share = Double(proposal.region.width * proposal.region.height) / area
            let score = settings.calibration.score(strength: proposal.strength, typeProbability: best.probability,
                                                   topClass: probabilities.max() ?? 0, share: Float(share), plain: plain)
            guard score >= settings.minimumScore else { continue }
            detections.append(Detection(object: DetectedObject(region: proposal.region.rescaled(from: size, to: full), type: best.type,
                                                               score: score, typeProbability: best.probability),
                                        vector: embedding.vector))
        }
        let kept = NonMaximumSuppression.select(detections, region: \.object.region, score: \.object.score,
                                                overlap: settings.overlap, containment: settings.containment, limit: limit)
        if kept.isEmpty { return try whole(image, head: head) }
        if kept.count == 1, Double(kept[0].object.region.width * kept[0].object.region.height)
            >= settings.wholeShare * Double(full.width * full.height) {
            return .whole(type: kept[0].object.type, typeProbability: kept[0].object.typeProbability)
        }
        return .objects(kept)
    }

    /// The whole picture as one object, typed by classifying it.
    func whole(_ image: PixelBuffer, head: ClassifierHead) throws(EmbeddingError) -> Outcome {
        let features = try embedder.embedWithFeatures([image])[0].features
        let best = ProductTypes.bestType(probabilities: head.probabilities(features))
        return .whole(type: best.type, typeProbability: best.probability)
    }

    /// The product type of `image` (the whole of it) and its probability.
    public func classify(_ image: PixelBuffer) throws(EmbeddingError) -> (type: String, probability: Float) {
        let head = try model.head()
        let features = try embedder.embedWithFeatures([image])[0].features
        return ProductTypes.bestType(probabilities: head.probabilities(features))
    }
}

/// A detected box's score as a probability that it is one whole object
/// (IoU ≥ 0.5 with one): a logistic map of what the detector knows about it,
/// fitted on the detection set's tune split (`bench/detection_methods.py`).
public struct ScoreCalibration: Sendable, Hashable {
    /// Weights of the proposal's strength, the type's probability, the top class's probability and the box's share of the picture.
    public var strength: Float = 2.0
    public var typeProbability: Float = 2.5
    public var topClass: Float = 1.0
    public var share: Float = 0.0
    /// The intercept on a plain background and on a photograph.
    public var plainBias: Float = -1.0
    public var photoBias: Float = -2.5

    public init() {}

    /// The calibrated score, 0...1.
    public func score(strength s: Float, typeProbability p: Float, topClass t: Float, share a: Float, plain: Bool) -> Float {
        let z = strength * s + typeProbability * p + topClass * t + share * a + (plain ? plainBias : photoBias)
        return 1 / (1 + Foundation.exp(-z))
    }
}
