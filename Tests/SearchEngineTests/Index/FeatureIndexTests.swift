@testable import SearchEngine
import TestSupport
import Testing

@Suite("FeatureIndex", .timeLimit(.minutes(10)))
struct FeatureIndexTests {
    @Test("dot products over all rows or chosen rows equal the plain sums, for any dimension")
    func dotProducts() {
        var random = TestSeed("FeatureIndexTests.dotProducts")
        for dimensions in [1, 15, 16, 17, 112] {
            let count = 9
            let vectors = (0..<(count * dimensions)).map { _ in Float.random(in: -1...1, using: &random) }
            let query = (0..<dimensions).map { _ in Float.random(in: -1...1, using: &random) }
            let index = FeatureIndex(dimensions: dimensions, vectors: vectors)
            let expected = (0..<count).map { row in (0..<dimensions).reduce(Float(0)) { $0 + query[$1] * vectors[row * dimensions + $1] } }
            let all = index.dotProducts(with: query)
            #expect(all.count == count)
            #expect(zip(all, expected).allSatisfy { abs($0 - $1) < 1e-4 }, "dimensions \(dimensions), seed \(random.seed)")
            let chosen = index.dotProducts(with: query, rows: [8, 0, 3])
            #expect(zip(chosen, [expected[8], expected[0], expected[3]]).allSatisfy { abs($0 - $1) < 1e-4 })
            #expect(abs(index.dot(2, 5) - (0..<dimensions).reduce(Float(0)) { $0 + vectors[2 * dimensions + $1] * vectors[5 * dimensions + $1] }) < 1e-4)
        }
    }

    @Test("with several query vectors each row gets the largest of its dot products, over all rows or chosen rows")
    func bestDotProducts() {
        var random = TestSeed("FeatureIndexTests.bestDotProducts")
        let dimensions = 112, count = 50
        let vectors = (0..<(count * dimensions)).map { _ in Float.random(in: -1...1, using: &random) }
        let index = FeatureIndex(dimensions: dimensions, vectors: vectors)
        let queries = (0..<3).map { _ in (0..<dimensions).map { _ in Float.random(in: -1...1, using: &random) } }
        for rows in [nil, [49, 0, 7, 7]] as [[Int]?] {
            let each = queries.map { index.dotProducts(with: $0, rows: rows) }
            let expected = (0..<each[0].count).map { i in each.map { $0[i] }.max()! }
            #expect(index.bestDotProducts(with: queries, rows: rows) == expected, "rows \(String(describing: rows)), seed \(random.seed)")
            #expect(index.bestDotProducts(with: [queries[1]], rows: rows) == each[1])
        }
        // The maximum really moves: with two different queries some row takes the second one's product.
        let two = index.bestDotProducts(with: [queries[0], queries[1]])
        #expect(zip(two, index.dotProducts(with: queries[0])).contains { $0 > $1 })
    }

    @Test("rows are found by name and by id; vectors come back as appended")
    func lookup() {
        var index = FeatureIndex(dimensions: 3)
        index.append(id: 42, name: "a", source: "/a.jpg", vector: [1, 0, 0], palette: DominantColors(entries: []))
        index.append(id: 7, name: "b", source: "/b.jpg", vector: [0, 1, 0], palette: DominantColors(entries: []))
        #expect(index.count == 2)
        #expect(index.row(named: "b") == 1 && index.row(id: 42) == 0)
        #expect(index.row(named: "c") == nil && index.row(id: 1) == nil)
        #expect(index.vector(at: 1) == [0, 1, 0] && index.sources == ["/a.jpg", "/b.jpg"] && index.ids == [42, 7])
        #expect(index.dotProducts(with: [0.5, 2, 0]) == [0.5, 2])
    }

    @Test("applying changes to an index a search still holds copies only the blocks of rows they touch")
    func changesCopyTouchedBlocks() {
        let perBlock = RowBlocks<Float>.rowsPerBlock, count = 3 * perBlock + 100
        func index(_ ids: Range<Int>) -> FeatureIndex {
            var index = FeatureIndex(dimensions: 16, learnedDimensions: 16)
            for id in ids {
                let vector = (0..<16).map { Float(($0 + id) % 7) + 1 }
                index.append(id: Int64(id), name: "i\(id)", source: "", vector: vector, learned: vector.reversed(), palette: DominantColors(entries: []))
            }
            return index
        }
        let held = index(0..<count)
        // One image changed in the second block, and a thousand new ones.
        var rows = index(perBlock + 5..<(perBlock + 6))
        rows.vectors.withMutableRow(0) { $0.update(repeating: 0.5) }
        let added = index(count..<(count + 1000))
        for row in 0..<added.count { rows.appendRow(from: added, row: row) }
        let applied = held.applying(CatalogChanges(version: 2, rows: rows, removed: []))
        #expect(applied.count == count + 1000 && held.count == count)
        // Four blocks held: the changed row's (the second) and the last (appended to) are copied, the others shared.
        #expect(applied.vectors.blocksShared(with: held.vectors) == 2 && applied.vectors.blockCount == 5)
        #expect(applied.learned!.values.blocksShared(with: held.learned!.values) == 2)
        #expect(applied.vector(at: perBlock + 5) == [Float](repeating: 0.5, count: 16))
        #expect(held.vector(at: perBlock + 5) == (0..<16).map { Float(($0 + perBlock + 5) % 7) + 1 }, "the held index is untouched")
        #expect(applied.row(id: Int64(count + 999)) == count + 999 && held.row(id: Int64(count)) == nil)
    }
}
