import Foundation
@testable import SearchEngine
import Testing
import TestSupport

@Suite("The classifier head")
struct ClassifierHeadTests {
    static func bytes(_ floats: [Float]) -> [UInt8] {
        floats.flatMap { value -> [UInt8] in withUnsafeBytes(of: value.bitPattern.littleEndian) { Array($0) } }
    }

    @Test("logits are weight · features + bias, row by row; probabilities are their softmax")
    func logits() throws {
        // Two classes over three channels: rows (1, 0, 2) and (0, 1, -1), biases 0.5 and -0.5.
        let head = try ClassifierHead(bytes: Self.bytes([1, 0, 2, 0, 1, -1, 0.5, -0.5]), classes: 2, channels: 3, path: "classifier.bin")
        let logits = head.logits([1, 2, 3])
        #expect(logits == [7.5, -1.5])
        let probabilities = head.probabilities([1, 2, 3])
        #expect(abs(probabilities.reduce(0, +) - 1) < 1e-6)
        #expect(abs(probabilities[0] - 1 / (1 + Float(exp(-9.0)))) < 1e-6)
    }

    @Test("a file of the wrong length, or holding NaN, is refused naming the file and the fix")
    func damaged() {
        #expect(throws: EmbeddingError.modelDamaged(path: "classifier.bin", reason: "the classifier has 12 bytes; 2×3 and 2 biases need 32")) {
            try ClassifierHead(bytes: Self.bytes([1, 2, 3]), classes: 2, channels: 3, path: "classifier.bin")
        }
        #expect(throws: EmbeddingError.self) {
            try ClassifierHead(bytes: Self.bytes([1, 0, .nan, 0, 1, -1, 0.5, -0.5]), classes: 2, channels: 3, path: "classifier.bin")
        }
        let error = EmbeddingError.modelDamaged(path: "classifier.bin", reason: "x")
        #expect(error.description.contains("vsearch model install --force"))
    }
}
