import Foundation

/// A learned model's manifest (`model.json`, written by
/// `scripts/install-model.sh` beside `model.onnx`): what the file is, where
/// it came from and how pixels become its input — everything needed to
/// reproduce one of its embeddings.
public struct ModelManifest: Sendable, Hashable, Codable {
    /// The model's name, e.g. `efficientnet-lite0`.
    public var name: String
    /// The recipe's version; changes whenever its vectors would.
    public var version: String
    /// `onnx`.
    public var format: String
    /// The model file, relative to the manifest's folder.
    public var file: String
    /// SHA-256 (hex) of the model file.
    public var sha256: String
    /// The tensor names.
    public var inputName: String
    public var outputName: String
    /// The side of the square input, in pixels.
    public var inputSize: Int
    /// Per-channel (R, G, B) mean and standard deviation applied to pixel/255.
    public var mean: [Float]
    public var std: [Float]
    /// The output's length before any projection.
    public var dimension: Int
    /// How an image becomes the square input: `pad` (longer side to the square,
    /// centred on white), `squash` (resized to the square, aspect not kept) or
    /// `center-crop` (shorter side to the square, centre cut).
    public var resize: String
    /// A fixed linear projection applied to the (unit) output, when shipped.
    public var projection: Projection?
    /// The licence of the weights.
    public var license: String?
    /// The same network without its pooling, for object detection (absent in
    /// a manifest written before detection: `scripts/install-model.sh` completes it).
    public var detector: Detector?
    /// The ImageNet classifier the embedding drops, for naming detected objects.
    public var classifier: Classifier?

    /// `detector.onnx`: input `[batch, 3, height, width]` (sides multiples of
    /// ``stride``), output `[batch, channels, height/stride, width/stride]`,
    /// the activations ``ModelManifest/file`` averages into its embedding.
    public struct Detector: Sendable, Hashable, Codable {
        public var file: String
        public var sha256: String
        public var outputName: String
        public var channels: Int
        public var stride: Int

        enum CodingKeys: String, CodingKey {
            case file, sha256, channels, stride, outputName = "output_name"
        }
    }

    /// `classifier.bin`: float32 little-endian, `weight[classes][channels]`
    /// row after row, then `bias[classes]`; logits = weight · embedding + bias
    /// on the model's raw (unnormalised) output.
    public struct Classifier: Sendable, Hashable, Codable {
        public var file: String
        public var sha256: String
        public var classes: Int
    }

    /// `projection.bin`: float32 little-endian, `mean` (dimension floats) then the
    /// `outputDimension × dimension` matrix, row after row.
    public struct Projection: Sendable, Hashable, Codable {
        public var file: String
        public var sha256: String
        public var outputDimension: Int

        enum CodingKeys: String, CodingKey {
            case file, sha256, outputDimension = "output_dimension"
        }
    }

    enum CodingKeys: String, CodingKey {
        case name, version, format, file, sha256, mean, std, dimension, resize, projection, license, detector, classifier
        case inputName = "input_name", outputName = "output_name", inputSize = "input_size"
    }

    /// The model's identity (``EmbeddingDescriptor/contentHash``, the tag a
    /// catalog records): SHA-256 (hex) of everything that makes its vectors —
    /// the model file's and the projection's checksums and the whole
    /// preprocessing (input size, resize, mean, std, tensor names, output
    /// length) — so a manifest changed in any of them is another model, and a
    /// catalog made before is re-indexed instead of being searched with
    /// vectors that no longer compare.
    public var identity: String {
        let recipe = [
            "model \(sha256)",
            "version \(version)",
            "projection " + (projection.map { "\($0.sha256) \($0.outputDimension)" } ?? "none"),
            "input \(inputName) \(inputSize) \(resize)",
            "mean " + mean.map { "\($0)" }.joined(separator: " "),
            "std " + std.map { "\($0)" }.joined(separator: " "),
            "output \(outputName) \(dimension)",
        ]
        return SHA256Digest.hex(of: Array(recipe.joined(separator: "\n").utf8))
    }

    /// Reads and checks a manifest.
    /// - Throws: ``EmbeddingError/modelDamaged(path:reason:)`` naming the file and what is wrong.
    public static func read(at path: String) throws(EmbeddingError) -> ModelManifest {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .modelDamaged(path: path, reason: "cannot read the manifest")
        }
        let manifest: ModelManifest
        do { manifest = try JSONDecoder().decode(ModelManifest.self, from: data) } catch {
            throw .modelDamaged(path: path, reason: "the manifest is not valid: \(error)")
        }
        try manifest.check(path: path)
        return manifest
    }

    func check(path: String) throws(EmbeddingError) {
        guard format == "onnx" else { throw .modelDamaged(path: path, reason: "format \(format) is not onnx") }
        guard (32...1024).contains(inputSize) else { throw .modelDamaged(path: path, reason: "input_size \(inputSize) is not in 32...1024") }
        guard mean.count == 3, std.count == 3, std.allSatisfy({ $0 > 0 && $0.isFinite }), mean.allSatisfy(\.isFinite) else {
            throw .modelDamaged(path: path, reason: "mean and std must be three finite numbers each, std positive")
        }
        guard dimension > 0 else { throw .modelDamaged(path: path, reason: "dimension \(dimension) is not positive") }
        guard ["pad", "squash", "center-crop"].contains(resize) else {
            throw .modelDamaged(path: path, reason: "resize \(resize) is not pad, squash or center-crop")
        }
        if let detector, detector.channels != dimension || detector.stride < 1 {
            throw .modelDamaged(path: path, reason: "detector channels \(detector.channels) must equal dimension \(dimension), stride positive")
        }
        if let classifier, classifier.classes < 2 {
            throw .modelDamaged(path: path, reason: "classifier classes \(classifier.classes) must be at least 2")
        }
        if let projection, !(1...dimension).contains(projection.outputDimension) || projection.outputDimension % 16 != 0 {
            throw .modelDamaged(path: path, reason: "projection output_dimension \(projection.outputDimension) must be a multiple of 16 in 16...\(dimension)")
        }
    }
}
