import SearchEngine
import TestSupport
import Testing

@Suite("QuantizedMatrix", .timeLimit(.minutes(10)))
struct QuantizedMatrixTests {

    /// Random vectors, and ones whose scaled values fall exactly on, and one step either
    /// side of, halfway between two integers (the largest is 127, so the scale is 1).
    static func vectors(dimensions: Int) -> [[Float]] {
        var random = TestSeed("QuantizedMatrixTests.vectors")
        var vectors = (0..<200).map { _ in (0..<dimensions).map { _ in Float.random(in: -1...1, using: &random) } }
        vectors += (0..<50).map { _ in (0..<dimensions).map { _ in Float.random(in: -1e-3...1e-3, using: &random) } }
        for _ in 0..<50 {
            var vector = [Float](repeating: 0, count: dimensions)
            vector[Int.random(in: 0..<dimensions, using: &random)] = Bool.random(using: &random) ? 127 : -127
            for i in vector.indices where vector[i] == 0 {
                let tie = Float(Int.random(in: -127...126, using: &random)) + 0.5
                vector[i] = [tie, tie.nextUp, tie.nextDown, 0.5, -0.5, Float(0.5).nextDown, -Float(0.5).nextDown][Int.random(in: 0..<7, using: &random)]
            }
            vectors.append(vector)
        }
        return vectors
    }

    @Test("rows are Int8((x × scale).rounded()) and their inverse length, ties away from zero", arguments: [16, 64, 512])
    func matchesRounding(dimensions: Int) {
        var matrix = QuantizedMatrix(dimensions: dimensions)
        let vectors = Self.vectors(dimensions: dimensions)
        for vector in vectors { matrix.append(vector) }
        #expect(matrix.count == vectors.count && matrix.filled == vectors.count)
        for (row, vector) in vectors.enumerated() {
            let (expected, inverseNorm) = Int8Reference.reference(vector)!
            #expect(Array(matrix.values[(row * dimensions)..<((row + 1) * dimensions)]) == expected, "row \(row)")
            #expect(matrix.inverseNorms[row].bitPattern == inverseNorm.bitPattern, "row \(row)")
            let unit = QuantizedMatrix.unitVector(of: vector)!
            #expect(unit.map(\.bitPattern) == expected.map { (Float($0) * inverseNorm).bitPattern })
        }
    }

    @Test("zeros, infinities, NaNs, too-small values and vectors of another length make empty rows")
    func emptyRows() {
        var matrix = QuantizedMatrix(dimensions: 16, keepsExact: true)
        let degenerate: [[Float]?] = [nil, [Float](repeating: 0, count: 16), [.infinity] + [Float](repeating: 1, count: 15),
                                      [.nan] + [Float](repeating: 1, count: 15), [Float.leastNonzeroMagnitude] + [Float](repeating: 0, count: 15),
                                      [Float](repeating: 1, count: 15)]
        for vector in degenerate { matrix.append(vector) }
        #expect(matrix.count == degenerate.count && matrix.filled == 0)
        #expect(matrix.values.allSatisfy { $0 == 0 } && matrix.inverseNorms.allSatisfy { $0 == 0 })
        #expect(matrix.exact!.allSatisfy { $0 == nil })
        #expect(QuantizedMatrix.unitVector(of: [Float](repeating: 0, count: 16)) == nil)
    }

    @Test("a row read from bytes at any alignment is the row of the same floats, kept exactly when asked")
    func fromBytes() {
        let vectors = Self.vectors(dimensions: 32).prefix(20)
        var fromArrays = QuantizedMatrix(dimensions: 32, keepsExact: true)
        var fromBytes = QuantizedMatrix(dimensions: 32, keepsExact: true)
        fromBytes.reserveCapacity(vectors.count)
        for (offset, vector) in vectors.enumerated() {
            fromArrays.append(vector)
            // The floats one to three bytes into a buffer, as SQLite may hand a blob over.
            let shift = offset % 4
            let buffer = [UInt8](repeating: 0, count: shift) + vector.withUnsafeBytes { Array($0) }
            buffer.withUnsafeBytes { fromBytes.append(bytes: UnsafeRawBufferPointer(rebasing: $0[shift...])) }
        }
        #expect(fromBytes.values == fromArrays.values && fromBytes.inverseNorms == fromArrays.inverseNorms)
        #expect(fromBytes.exact! == fromArrays.exact! && fromBytes.exact!.map { $0! } == Array(vectors))
    }
}
