import ImageOps

/// The colour descriptor as an ``ImageEmbedder``: ``ColorFeatures``' 112
/// floats (an HSV histogram and a 4×4 Lab layout) of the image reduced to
/// ``ColorFeatures/workingSide`` pixels. No model file: its hash is of its version.
public struct ColorEmbedder: ImageEmbedder {
    public init() {}

    public var descriptor: EmbeddingDescriptor {
        EmbeddingDescriptor(name: "colour-histogram", version: "\(ColorFeatures.version)", dimension: ColorFeatures.dimensions,
                            preprocessing: "sRGB, margins trimmed, reduced to \(ColorFeatures.workingSide) px on the longer side; "
                                + "HSV histogram (64 soft bins, Hellinger) and 4×4 Lab layout, weighted 0.94 / 0.35",
                            contentHash: ContentHash.of(Array("vsearch colour features \(ColorFeatures.version)".utf8)))
    }

    /// ``ColorFeatures/workingSide`` pixels on the shorter side.
    public func decodeScale(for size: PixelSize) -> Double {
        min(1, Double(ColorFeatures.workingSide) / Double(max(1, min(size.width, size.height))))
    }

    public func embed(_ images: [PixelBuffer]) throws(EmbeddingError) -> [[Float]] {
        images.map(ColorFeatures.vector(of:))
    }
}
