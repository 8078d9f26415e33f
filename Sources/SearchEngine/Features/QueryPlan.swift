import ImageOps

/// What decoding a query image will take, read from its header alone
/// (``FeaturePipeline/plan(_:box:source:)``): the region searched, the
/// shrink-on-load target and the pixels the decode produces — so a server
/// can budget a query before it decodes.
public struct QueryPlan: Sendable, Hashable {
    /// The image's header (limits already checked).
    public var header: ImageHeader
    /// The region searched, in the image's upright pixels.
    public var region: PixelRect
    /// The smallest decoded size that keeps what every embedder needs of the region.
    public var minimumSize: PixelSize
    /// Pixels the decode produces (after DCT or WebP scaling): its memory cost is about 4 bytes each.
    public var decodedPixels: Int { ShrinkOnLoad.decodedPixelCount(of: header, minimumSize: minimumSize) }

    public init(header: ImageHeader, region: PixelRect, minimumSize: PixelSize) {
        self.header = header
        self.region = region
        self.minimumSize = minimumSize
    }

    /// The plan of one decode that serves several regions of the same image
    /// (a discover search's box and points): the largest of their
    /// shrink-on-load targets, so every region keeps the pixels its own plan
    /// asked for. Its ``decodedPixels`` is what the one decode costs.
    /// - Precondition: `plans` is not empty and every plan is of the same image.
    public init(covering plans: [QueryPlan]) {
        precondition(!plans.isEmpty, "at least one region")
        let header = plans[0].header
        self.init(header: header, region: PixelRect(x: 0, y: 0, width: header.size.width, height: header.size.height),
                  minimumSize: plans.dropFirst().reduce(plans[0].minimumSize) { $0.covering($1.minimumSize) })
    }
}
