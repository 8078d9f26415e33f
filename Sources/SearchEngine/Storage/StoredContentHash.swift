/// The content hash a catalog row stores, and what it says: the file's
/// ``ContentHash``, the ``ColorFeatures/version`` that computed its colour
/// vector, and the learned model that computed its learned vector, if any
/// (`<sha256>-f3-m<12 hex digits>`). The stores keep it as an opaque string;
/// the indexer writes it and reads it back to know what to recompute, and
/// ``FeatureCensus`` counts by it.
public enum StoredContentHash {
    /// What a catalog row stores as its content hash: the file's ``ContentHash``
    /// tagged with the ``ColorFeatures/version`` that computed its vector
    /// (`…-f3`), so re-indexing recomputes the vectors of an older vsearch
    /// (whose rows hold the bare hash) and `catalog migrate` carries the tag
    /// along with the vector it belongs to.
    /// With a learned model, its tag follows (`…-f3-m<12 hex digits of its hash>`):
    /// indexing with another model (or with one after none) computes the row again.
    public static func fingerprint(of bytes: [UInt8], learned: EmbeddingDescriptor? = nil) -> String {
        ContentHash.of(bytes) + "-f\(ColorFeatures.version)" + (learned.map(learnedTag(of:)) ?? "")
    }

    /// The part of a fingerprint naming the learned model: `-m` and 12 hex digits of its hash.
    public static func learnedTag(of descriptor: EmbeddingDescriptor) -> String {
        "-m" + descriptor.contentHash.prefix(12)
    }

    /// Whether a stored content hash was computed by this vsearch's colour features (any learned model).
    public static func isCurrent(_ storedHash: String) -> Bool {
        colorPart(of: storedHash).hasSuffix("-f\(ColorFeatures.version)")
    }

    /// A stored content hash without its learned model's tag.
    public static func colorPart(of storedHash: String) -> Substring {
        guard let range = storedHash.range(of: "-m", options: .backwards) else { return Substring(storedHash) }
        return storedHash[..<range.lowerBound]
    }

    /// Whether a stored content hash holds a learned vector of `descriptor`'s model.
    public static func hasLearned(_ storedHash: String, of descriptor: EmbeddingDescriptor) -> Bool {
        storedHash.hasSuffix(learnedTag(of: descriptor))
    }
}
