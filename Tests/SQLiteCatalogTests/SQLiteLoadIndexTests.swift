import Foundation
import SearchEngine
import SQLiteCatalog
import TestSupport
import Testing
import VisualSearch

/// ``SQLiteCatalogStore/loadIndex(learned:)`` holds exactly what the first loader held —
/// rows in id order, each appended as `[Float]`s with its palette through `JSONDecoder`
/// and its learned vector quantized as `Int8((x × scale).rounded())` — whatever the
/// blobs' alignment in SQLite's pages and whatever the palettes.
@Suite("SQLiteCatalogStore.loadIndex", .timeLimit(.minutes(10)))
struct SQLiteLoadIndexTests {
    static let dimension = 64

    /// 300 items: every fifth without a learned vector; palettes of zero to eight random colours.
    static func items() -> [CatalogItem] {
        var random = TestSeed("SQLiteLoadIndexTests.items")
        return (0..<300).map { seed in
            var item = Items.item(String(format: "img-%04d", seed), seed: seed, source: "/catalog/\(seed)/" + String(repeating: "x", count: seed % 40))
            item.learned = seed % 5 == 0 ? nil : Items.learnedVector(seed, dimension: dimension)
            item.palette = DominantColors(entries: (0..<(seed % 9)).map { _ in
                DominantColors.Entry(color: LabColor(l: Float.random(in: 0...100, using: &random), a: Float.random(in: -100...100, using: &random),
                                                     b: Float.random(in: -100...100, using: &random)),
                                     fraction: Float.random(in: 0...1, using: &random))
            })
            return item
        }
    }

    @Test("the loaded index equals the one the first loader built, compact and exact", arguments: [LearnedVectorLoading.compact, .exact, .none])
    func equalsFirstLoader(loading: LearnedVectorLoading) async throws {
        let store = try await SQLiteCatalogStore(path: Repository.temporaryDirectory("load-index") + "/catalog.sqlite", creating: true)
        try await store.recordLearnedModel(Items.learnedModel(dimension: Self.dimension))
        let items = Self.items()
        try await store.upsert(items, schema: FieldSchema(fields: [:]))
        let loaded = try await store.loadIndex(learned: loading)

        #expect(loaded.ids == Array(1...Int64(items.count)))
        #expect(loaded.names == items.map(\.imageName) && loaded.sources == items.map(\.source))
        #expect(loaded.vectors.map(\.bitPattern) == items.flatMap(\.features).map(\.bitPattern))
        let palettes = try items.map { try JSONDecoder().decode(DominantColors.self, from: JSONEncoder().encode($0.palette)) }
        #expect(loaded.palettes.map(Self.bits) == palettes.map(Self.bits))
        #expect(items.indices.allSatisfy { loaded.row(named: items[$0].imageName) == $0 && loaded.row(id: Int64($0 + 1)) == $0 })

        guard loading != .none else { return #expect(loaded.learned == nil) }
        let learned = try #require(loaded.learned)
        let reference = items.map { $0.storedLearned.flatMap(Int8Reference.reference) }
        #expect(learned.count == items.count && learned.filled == reference.compactMap { $0 }.count)
        #expect(Array(learned.values) == reference.flatMap { $0?.0 ?? [Int8](repeating: 0, count: Self.dimension) })
        #expect(learned.inverseNorms.map(\.bitPattern) == reference.map { ($0?.1 ?? 0).bitPattern })
        if loading == .exact {
            #expect(learned.exact! == items.map(\.storedLearned))
        } else {
            #expect(learned.exact == nil)
        }
    }

    static func bits(_ palette: DominantColors) -> [UInt32] {
        palette.entries.flatMap { [$0.color.l, $0.color.a, $0.color.b, $0.fraction].map(\.bitPattern) }
    }
}
