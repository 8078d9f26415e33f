import Foundation
import ImageOps

/// Finds the objects of a picture with the learned model alone
/// (docs/decisions.md, "Object detection", has the method step by step and
/// its figures):
/// - on a plain background, ``ForegroundProposals``' components, a large one
///   split in two by ``ComponentSplit`` when the network sees two unlike
///   things in it; each scored from its crop's classification;
/// - on a photograph, ``ContrastWindows``' refined windows scored by colour
///   contrast, shape and ``FeatureSaliency`` (a logistic, ``ScoreCalibration``);
/// then ``NonMaximumSuppression``, at most the limit, and each kept box
/// classified by the model's ImageNet head (one run of the embedding network
/// per crop, which also gives the crop's search vector) and named by
/// ``ProductTypes``.
///
/// A picture whose one object covers most of it (``Settings/wholeShare``) is
/// one object: the whole picture, searched as an upload search searches it
/// (``Outcome/whole``).
public struct ObjectDetector: Sendable {
    public let model: DetectionModel
    public let embedder: LearnedEmbedder
    public var settings: Settings

    /// The detector's constants (chosen on the detection set's tune split: docs/decisions.md, "Object detection").
    public struct Settings: Sendable, Hashable {
        public var foreground = ForegroundProposals()
        public var split = ComponentSplit()
        public var windows = ContrastWindows()
        /// The detector network's input, longer side.
        public var featureSide = 384
        /// Photographic candidates scored before selection (after NMS at IoU 0.7).
        public var candidates = 8
        /// Plain-background components classified at most (largest first).
        public var components = 8
        /// Intersection over union above which the lower-scored of two objects goes.
        public var overlap = 0.5
        /// The share of the smaller of two boxes inside the other above which the lower-scored goes.
        public var containment = 0.7
        /// Photographic boxes scored below this are not reported (the best one always is).
        public var minimumScore: Float = 0.5
        /// A lone object covering this share of the picture is the whole picture.
        public var wholeShare = 0.4
        public var calibration = ScoreCalibration()

        public init() {}
    }

    /// What a picture holds.
    public enum Outcome: Sendable {
        /// Separate objects, best first, each with the learned vector of its crop.
        case objects([Detection])
        /// One object that is the whole picture (typed from the whole picture's
        /// classification), with the whole picture's learned vector (what its search uses).
        case whole(type: String, typeProbability: Float, vector: [Float])
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

    /// A box before it is classified: where, and what its score is made of.
    struct Candidate {
        var region: PixelRect
        /// The photographic score (calibrated), or nil on a plain background (scored after classification).
        var score: Float?
    }

    /// The objects of `image` (decoded, perhaps shrunk, from a picture of
    /// upright size `full`), at most `limit`; regions in `full`'s pixels.
    /// `shouldStop` is asked before the crops are classified.
    /// - Throws: ``EmbeddingError`` when the model cannot load or run.
    public func detect(_ image: PixelBuffer, full: PixelSize, limit: Int, shouldStop: () -> Bool = { false }) throws(EmbeddingError) -> Outcome {
        let head = try model.head()
        let picture = image.hasAlpha ? image.flattened() : image
        let size = picture.size, area = Double(size.width * size.height)
        var kept: [Candidate]
        if let analysis = settings.foreground.analyse(picture) {
            var regions: [PixelRect] = []
            let splittable = analysis.proposals.prefix(settings.components).filter { settings.split.applies(to: $0, picture: size) }
            var parts: [ForegroundProposals.Proposal: [PixelRect]] = [:]
            if !splittable.isEmpty {
                let map = try model.featureMap(of: picture, longSide: settings.split.inputSide)
                let cells = map.unitCells()
                for proposal in splittable {
                    parts[proposal] = settings.split.parts(of: proposal, analysis: analysis, map: map, cells: cells, picture: size)
                }
            }
            for proposal in analysis.proposals.prefix(settings.components) { regions += parts[proposal] ?? [proposal.region] }
            kept = regions.map { Candidate(region: $0, score: nil) }
        } else {
            let windows = settings.windows.candidates(in: picture)
            guard !windows.isEmpty else { return try whole(picture, head: head) }
            let map = try model.featureMap(of: picture, longSide: settings.featureSide)
            let saliency = FeatureSaliency(map: map, cells: map.unitCells())
            let scored = windows.map { window in
                Candidate(region: window.region, score: settings.calibration.photographScore(window, saliency: saliency.measure(window.region),
                                                                                            areaShare: Double(window.region.width * window.region.height) / area))
            }
            let candidates = NonMaximumSuppression.select(scored, region: \.region, score: { $0.score ?? 0 }, overlap: 0.7, limit: settings.candidates)
            let selected = NonMaximumSuppression.select(candidates, region: \.region, score: { $0.score ?? 0 }, overlap: settings.overlap,
                                                        containment: settings.containment, limit: limit)
            let passing = selected.filter { ($0.score ?? 0) >= settings.minimumScore }
            kept = passing.isEmpty ? Array(selected.prefix(1)) : passing
        }
        // One candidate that fills most of the picture is the whole picture: typed from it, its crop never embedded.
        if kept.isEmpty || (kept.count == 1 && fills(kept[0].region.rescaled(from: size, to: full), full)) {
            return try whole(picture, head: head)
        }
        if shouldStop() { return .objects([]) }
        var crops: [PixelBuffer] = []
        for candidate in kept {
            guard let crop = try? ImageProcessors.Crop(candidate.region).process(picture) else { continue }
            crops.append(crop)
        }
        guard crops.count == kept.count else { return .objects([]) }
        let described = try embedder.embedWithFeatures(crops)
        var detections: [Detection] = []
        for (candidate, embedding) in zip(kept, described) {
            let probabilities = head.probabilities(embedding.features)
            let best = ProductTypes.bestType(probabilities: probabilities)
            let share = Double(candidate.region.width * candidate.region.height) / area
            let score = candidate.score ?? settings.calibration.plainScore(topClass: probabilities.max() ?? 0, areaShare: share)
            detections.append(Detection(object: DetectedObject(region: candidate.region.rescaled(from: size, to: full), type: best.type,
                                                               score: score, typeProbability: best.probability),
                                        vector: embedding.vector))
        }
        let result = NonMaximumSuppression.select(detections, region: \.object.region, score: \.object.score,
                                                  overlap: settings.overlap, containment: settings.containment, limit: limit)
        // On a plain background every component stays (its score is reported, not a threshold); objects are ranked by score.
        if result.isEmpty { return try whole(picture, head: head) }
        if result.count == 1, fills(result[0].object.region, full) { return try whole(picture, head: head) }
        return .objects(result)
    }

    /// Whether a lone object's box covers ``Settings/wholeShare`` of the picture.
    func fills(_ region: PixelRect, _ full: PixelSize) -> Bool {
        Double(region.width * region.height) >= settings.wholeShare * Double(full.width * full.height)
    }

    /// The whole picture as one object, typed by classifying it.
    func whole(_ image: PixelBuffer, head: ClassifierHead) throws(EmbeddingError) -> Outcome {
        let embedding = try embedder.embedWithFeatures([image])[0]
        let best = ProductTypes.bestType(probabilities: head.probabilities(embedding.features))
        return .whole(type: best.type, typeProbability: best.probability, vector: embedding.vector)
    }
}

/// A detected box's score as a probability that it holds one whole object
/// (IoU ≥ 0.5 with one): logistic maps fitted on the detection set's tune
/// split (`bench/detection_methods.py`; docs/decisions.md, "Object detection",
/// has the fit and how well it is calibrated).
public struct ScoreCalibration: Sendable, Hashable {
    /// Plain background: σ(intercept + topClass · logit(top class probability) + area · ln(box share)).
    public var plainIntercept = 2.6
    public var plainTopClass = 0.516
    public var plainArea = 0.12
    /// Photograph: σ(w · f) over the 13 features of ``photographScore(_:saliency:areaShare:)``, in that order.
    public var photograph: [Double] = [-12.71, -5.501, -6.845, 11.085, 9.513, 11.673, -6.035, 0.031, 0.0, -2.051, -2.239, -1.381, -2.872]

    public init() {}

    /// A plain-background component's score from its crop's top class probability and its share of the picture.
    public func plainScore(topClass: Float, areaShare: Double) -> Float {
        let p = min(max(Double(topClass), 1e-4), 1 - 1e-4)
        return Self.sigmoid(plainIntercept + plainTopClass * Foundation.log(p / (1 - p)) + plainArea * Foundation.log(max(areaShare, 1e-4)))
    }

    /// A photographic window's score: 1, the window's contrast, ln a, saliency
    /// contrast, saliency inside, the refined box's contrast, its fill, the
    /// window's IoU with it, whether it touches the border, |ln aspect|,
    /// saliency inside², (ln a)², saliency contrast × inside; a the refined
    /// box's share of the picture (at least 10⁻⁴).
    func photographScore(_ window: ContrastWindows.Candidate, saliency: (inside: Double, contrast: Double), areaShare: Double) -> Float {
        let la = Foundation.log(max(areaShare, 1e-4))
        let features = [1, window.windowContrast, la, saliency.contrast, saliency.inside, window.refinedContrast, window.fill,
                        window.windowOverlap, window.touchesBorder ? 1 : 0, window.aspect, saliency.inside * saliency.inside, la * la,
                        saliency.contrast * saliency.inside]
        return Self.sigmoid(zip(photograph, features).reduce(0) { $0 + $1.0 * $1.1 })
    }

    static func sigmoid(_ z: Double) -> Float { Float(1 / (1 + Foundation.exp(-z))) }
}
