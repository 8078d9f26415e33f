import Foundation

/// The ImageNet classifier the learned embedding leaves out (`classifier.bin`
/// of the model's folder): logits = weight · features + bias on the model's
/// raw, pooled output, and their softmax.
public struct ClassifierHead: Sendable {
    /// Classes (1000 for ImageNet-1k).
    public let classes: Int
    /// The features' length (the model's ``ModelManifest/dimension``).
    public let channels: Int
    let weights: [Float]
    let bias: [Float]

    /// Reads `classifier.bin`: float32 little-endian, `weight[classes][channels]` then `bias[classes]`.
    /// - Throws: ``EmbeddingError/modelDamaged(path:reason:)`` for a file of the wrong length or with values that are not finite.
    public init(bytes: [UInt8], classes: Int, channels: Int, path: String) throws(EmbeddingError) {
        let floats = classes * (channels + 1)
        guard bytes.count == floats * 4 else {
            throw .modelDamaged(path: path, reason: "the classifier has \(bytes.count) bytes; \(classes)×\(channels) and \(classes) biases need \(floats * 4)")
        }
        let values = bytes.withUnsafeBytes { raw in
            (0..<floats).map { Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self))) }
        }
        guard values.allSatisfy(\.isFinite) else { throw .modelDamaged(path: path, reason: "the classifier holds values that are not finite") }
        self.init(weights: Array(values[0..<(classes * channels)]), bias: Array(values[(classes * channels)...]), channels: channels)
    }

    /// A head from its weights (`classes × channels`, row after row) and biases.
    public init(weights: [Float], bias: [Float], channels: Int) {
        precondition(channels > 0 && weights.count == bias.count * channels, "weights must be classes × channels")
        self.classes = bias.count
        self.channels = channels
        self.weights = weights
        self.bias = bias
    }

    /// The logits of one feature vector (`channels` floats).
    public func logits(_ features: [Float]) -> [Float] {
        precondition(features.count == channels, "\(features.count) features, the classifier takes \(channels)")
        return features.withUnsafeBufferPointer { f in
            weights.withUnsafeBufferPointer { w in
                (0..<classes).map { row in DotProduct.of(f.baseAddress!, w.baseAddress! + row * channels, channels) + bias[row] }
            }
        }
    }

    /// The class probabilities (softmax of ``logits(_:)``), summing to 1.
    public func probabilities(_ features: [Float]) -> [Float] {
        Self.softmax(logits(features))
    }

    /// Softmax, computed stably.
    static func softmax(_ logits: [Float]) -> [Float] {
        guard let top = logits.max() else { return [] }
        let exps = logits.map { Foundation.exp($0 - top) }
        let sum = exps.reduce(0, +)
        return exps.map { $0 / sum }
    }
}
