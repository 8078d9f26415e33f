import ImageOps

/// Pixels → a vector: the seam between what an image looks like and what the
/// catalog compares. Two conform: ``ColorEmbedder`` (the colour descriptor,
/// always there) and ``LearnedEmbedder`` (a network run by ONNX Runtime, when
/// its model is installed). Both return unit-length vectors, so similarity is
/// a dot product (``Similarity``).
///
/// An embedder is given an image already decoded to sRGB, oriented and
/// cropped to what is described (margins trimmed, a box, a proposal);
/// preparing it for its own input (resizing, normalising) is its business.
/// Embedders are thread-safe: the image work pool calls them from several threads.
public protocol ImageEmbedder: Sendable {
    /// What made the vectors: recorded in the catalog, so a catalog made by
    /// another model is recognised.
    var descriptor: EmbeddingDescriptor { get }

    /// The scale (at most 1) an image or region of `size` may be decoded at
    /// with shrink-on-load and still give this embedder all it uses.
    func decodeScale(for size: PixelSize) -> Double

    /// The vectors of `images`, in their order, each ``EmbeddingDescriptor/dimension`` long and of unit length.
    /// - Throws: ``EmbeddingError`` when the model fails to run.
    func embed(_ images: [PixelBuffer]) throws(EmbeddingError) -> [[Float]]

    /// Makes sure the embedder can run (loads a model, checks its files), so a
    /// job that would fail on every image fails before it writes anything.
    func load() throws(EmbeddingError)
}

extension ImageEmbedder {
    /// Nothing to load.
    public func load() throws(EmbeddingError) {}

    /// The vector of one image.
    /// - Throws: ``EmbeddingError`` when the model fails to run.
    public func embed(_ image: PixelBuffer) throws(EmbeddingError) -> [Float] {
        let vectors = try embed([image])
        return vectors[0]
    }
}

/// What made a set of vectors, exactly enough that anyone can reproduce one:
/// `vsearch model info --json` prints it, the catalog records it.
public struct EmbeddingDescriptor: Sendable, Hashable, Codable {
    /// The model's name, e.g. `efficientnet-lite0-imagenet`.
    public var name: String
    /// The version of the whole recipe (model, preprocessing, projection): a
    /// change in any of them changes the vectors.
    public var version: String
    /// Floats per stored vector.
    public var dimension: Int
    /// How pixels become the model's input, in words a person can reproduce.
    public var preprocessing: String
    /// SHA-256 (hex) of the model file, its projection and its whole
    /// preprocessing (``ModelManifest/identity``), or of the algorithm's
    /// version for a descriptor without a file.
    public var contentHash: String

    public init(name: String, version: String, dimension: Int, preprocessing: String, contentHash: String) {
        self.name = name
        self.version = version
        self.dimension = dimension
        self.preprocessing = preprocessing
        self.contentHash = contentHash
    }

    /// A short tag for content hashes and messages: the name and the first 12 hex digits of the hash.
    public var tag: String { "\(name)@\(contentHash.prefix(12))" }

    /// Whether this model makes the same vectors as `other`: the one answer to
    /// "was this catalog made by this model?" — the engine's default similarity,
    /// the indexer's reuse of stored vectors, and what `index`, `info` and
    /// `serve` say. The content hash covers the model file, its projection and
    /// its whole preprocessing; the name, version and preprocessing words are
    /// labels of what the hash already fixes.
    public func makesSameVectors(as other: EmbeddingDescriptor?) -> Bool {
        guard let other else { return false }
        return contentHash == other.contentHash && dimension == other.dimension
    }

    enum CodingKeys: String, CodingKey {
        case name, version, dimension, preprocessing, contentHash = "sha256"
    }
}

/// An embedder that failed.
public enum EmbeddingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The model is not installed where it was looked for.
    case modelMissing(looked: [String])
    /// The model's files are there but unusable (damaged, wrong format, wrong checksum).
    case modelDamaged(path: String, reason: String)
    /// The inference runtime's library could not be loaded.
    case runtimeUnavailable(path: String, reason: String)
    /// The model ran and failed.
    case inference(reason: String)

    /// How to install the model.
    public static let installCommand = "vsearch model install"

    public var description: String {
        switch self {
        case .modelMissing(let looked):
            "the learned similarity model is not installed (looked in \(looked.joined(separator: ", "))); "
                + "install it with `\(Self.installCommand)` (or ./scripts/install-model.sh in a clone), or set VSEARCH_MODEL_DIR"
        case .modelDamaged(let path, let reason):
            "the model at \(path) is unusable: \(reason); reinstall it with `\(Self.installCommand) --force`"
        case .runtimeUnavailable(let path, let reason):
            "ONNX Runtime could not be loaded from \(path): \(reason); install it with `\(Self.installCommand)` or set VSEARCH_ONNXRUNTIME"
        case .inference(let reason):
            "the model failed: \(reason)"
        }
    }
}
