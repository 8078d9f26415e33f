import ImageOps

/// What a query image is searched with: one vector for the whole image (its
/// margins trimmed) and, when ``ObjectProposal`` finds a product placed on a
/// page, one for that region. A catalog image's score is the better of its
/// scores against each.
public struct QueryFeatures: Sendable, Hashable {
    /// The whole image's vector first, then the proposal's; never empty.
    public let vectors: [[Float]]
    /// The learned vectors of the same regions, in the same order, when a learned embedder was given.
    public let learned: [[Float]]?
    /// The region of the image searched (the box, or the whole image).
    public let region: PixelRect

    /// The whole image's vector.
    public var primary: [Float] { vectors[0] }

    /// Creates query features.
    public init(vectors: [[Float]], learned: [[Float]]? = nil, region: PixelRect) {
        precondition(!vectors.isEmpty, "a query has at least one vector")
        precondition(learned == nil || learned?.count == vectors.count, "a learned vector for each region")
        self.vectors = vectors
        self.learned = learned
        self.region = region
    }
}
