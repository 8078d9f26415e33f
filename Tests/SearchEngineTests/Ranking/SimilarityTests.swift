import SearchEngine
import TestSupport
import Testing

@Suite("Similarity", .timeLimit(.minutes(10)))
struct SimilarityTests {
    @Test("score = 1 − ‖a − b‖ / 2 for unit vectors, from their dot product, clamped to [0, 1]", arguments: [
        (Float(1), Float(1)),                  // identical
        (Float(0.5), Float(0.5)),              // ‖a − b‖ = 1
        (Float(0), Float(1 - 0.5.squareRoot())),  // orthogonal: 1 − √2 / 2
        (Float(-1), Float(0)),                 // opposite
        (Float(1.000_01), Float(1)),           // rounding above 1
        (Float(-1.5), Float(0)),               // rounding below −1
        (Float(0.875), Float(0.75)),           // ‖a − b‖² = 0.25
        (Float(1) - .ulpOfOne / 2, Float(1)),  // a vector with itself, summed one ulp short of 1: rounding, not distance
        (Float(0.98), Float(0.9)),             // ‖a − b‖² = 0.04: a real distance, not rounding
    ])
    func table(dot: Float, score: Float) {
        #expect(abs(Similarity.score(dot: dot) - score) < 1e-6, "dot \(dot)")
    }

    @Test("the score never decreases as the dot product grows, and stays in [0, 1]")
    func monotone() {
        var random = TestSeed("SimilarityTests.monotone")
        let dots = (0..<2000).map { _ in Float.random(in: -1.2...1.2, using: &random) }.sorted()
        let scores = dots.map(Similarity.score(dot:))
        #expect(zip(scores, scores.dropFirst()).allSatisfy { $0 <= $1 }, "seed \(random.seed)")
        #expect(scores.allSatisfy { (0...1).contains($0) }, "seed \(random.seed)")
    }

    @Test("the score agrees with the Euclidean distance of real unit vectors")
    func euclidean() {
        var random = TestSeed("SimilarityTests.euclidean")
        for _ in 0..<100 {
            let a = Self.unit((0..<112).map { _ in Float.random(in: -1...1, using: &random) })
            let b = Self.unit((0..<112).map { _ in Float.random(in: -1...1, using: &random) })
            let dot = zip(a, b).reduce(0) { $0 + $1.0 * $1.1 }
            let distance = zip(a, b).reduce(0) { $0 + ($1.0 - $1.1) * ($1.0 - $1.1) }.squareRoot()
            #expect(abs(Similarity.score(dot: dot) - (1 - distance / 2)) < 1e-4, "seed \(random.seed)")
        }
    }

    static func unit(_ vector: [Float]) -> [Float] {
        let norm = vector.reduce(0) { $0 + $1 * $1 }.squareRoot()
        return vector.map { $0 / norm }
    }
}
