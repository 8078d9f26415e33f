import ImageOps

/// One object found in a picture: where it is, what kind of product it is
/// and how sure the detector is that it is an object at all.
public struct DetectedObject: Sendable, Hashable {
    /// The object's box in the picture's upright pixels.
    public var region: PixelRect
    /// Its product type (``ProductTypes``): a fashion type, a coarse group, or an ImageNet class's name.
    public var type: String
    /// The probability (0...1) that the box holds one whole object, calibrated
    /// on the detection set's tune split (docs/decisions.md, "Object detection"):
    /// of the boxes scored 0.7, about seven in ten are right (IoU ≥ 0.5).
    public var score: Float
    /// The classifier's probability of ``type`` for the box (all its ImageNet classes summed).
    public var typeProbability: Float

    public init(region: PixelRect, type: String, score: Float, typeProbability: Float) {
        self.region = region
        self.type = type
        self.score = score
        self.typeProbability = typeProbability
    }

    /// The box as the wire writes it (``PixelRect/wireBox``).
    public var box: [Int] { region.wireBox }
}

extension PixelRect {
    /// The rectangle as the ViSearch wire writes a box: `[x1, y1, x2, y2]`, right and bottom exclusive.
    public var wireBox: [Int] { [x, y, x + width, y + height] }
}
