/// Counts content hashes as ``CatalogReader/featureCensus()`` does: those carrying the
/// learned model's tag, and those an older vsearch's colour features made.
public struct FeatureCensus: Sendable {
    let tag: String?
    public private(set) var learned = 0
    public private(set) var stale = 0

    public init(model: EmbeddingDescriptor?) {
        tag = model.map(StoredContentHash.learnedTag(of:))
    }

    public mutating func count(_ hash: String) {
        if let tag, hash.hasSuffix(tag) { learned += 1 }
        if !StoredContentHash.isCurrent(hash) { stale += 1 }
    }
}
