import Foundation
import SearchEngine
import Testing
import VisualSearch
import TestSupport

/// Find similar by a bare vector (what `vsearch debug query-vectors` and
/// bench/scale.py run): colour vectors as before, learned ones in the
/// catalog's learned space with `similarity` `.visual`, on every store.
struct VectorSearchTests {
    static let schema = FieldSchema(fields: ["brand": .string])

    /// Runs `body` with a catalog of 24 images with colour and learned vectors (64 floats) under a recorded model.
    static func withLearnedCatalog(_ factory: StoreFactory, _ body: (VisualSearchEngine, [CatalogItem]) async throws -> Void) async throws {
        try await factory.withStore { subject async throws in
            let store = subject.store
            try await store.declare(schema)
            try await store.recordLearnedModel(Items.learnedModel())
            let items = (0..<24).map { seed in
                var item = Items.item(String(format: "v%07d", seed), seed: seed, metadata: ["brand": "b\(seed % 3)"])
                item.learned = Items.learnedVector(seed)
                return item
            }
            try await store.upsert(items, schema: schema)
            try await body(try await subject.engine(), items)
        }
    }

    @Test("visual: the nearest by the cosine of the stored learned vectors, filters apply; colour as before", arguments: StoreFactory.all)
    func learnedVectors(factory: StoreFactory) async throws {
        try await Self.withLearnedCatalog(factory) { engine, items async throws in
            var parameters = SearchParameters()
            parameters.limit = 5
            parameters.includesScore = true
            let query = Items.learnedVector(100)
            let response = try await engine.vectorSearch(query, similarity: .visual, parameters: parameters)
            #expect(response.similarity == .visual)
            func dot(_ a: [Float], _ b: [Float]) -> Float { zip(a, b).reduce(0) { $0 + $1.0 * $1.1 } }
            let expected = items.sorted { dot($0.storedLearned!, query) > dot($1.storedLearned!, query) }.prefix(5).map(\.imageName)
            #expect(response.result.map(\.imageName) == expected)

            // An image's own stored vector finds it first; a filter keeps to its rows.
            parameters.filters = [try Filter(parsing: "brand:b1", acceptsEquals: true)]
            let own = try await engine.vectorSearch(items[7].storedLearned!, similarity: .visual, parameters: parameters)
            #expect(own.result.first?.imageName == items[7].imageName)
            #expect(own.result.allSatisfy { Int($0.imageName.dropFirst())! % 3 == 1 })

            let color = try await engine.vectorSearch(items[4].features, parameters: SearchParameters())
            #expect(color.similarity == .color && color.result.first?.imageName == items[4].imageName)
        }
    }

    @Test("refused: a learned vector of another length, fused, visual on a catalog without learned vectors")
    func refusals() async throws {
        try await Self.withLearnedCatalog(.sqlite) { engine, _ async throws in
            await #expect(throws: VisualSearchError.self) { try await engine.vectorSearch(Items.learnedVector(1, dimension: 32), similarity: .visual) }
            await #expect(throws: VisualSearchError.self) { try await engine.vectorSearch(Items.learnedVector(1), similarity: .fused) }

            try await StoreFactory.sqlite.withStore { subject async throws in
                try await subject.store.declare(Self.schema)
                try await subject.store.upsert([Items.item("a", seed: 1)], schema: Self.schema)
                let colorOnly = try await subject.engine()
                do {
                    _ = try await colorOnly.vectorSearch(Items.learnedVector(1), similarity: .visual)
                    Issue.record("a colour-only catalog answered a learned vector")
                } catch {
                    guard let error = error as? VisualSearchError, case .learnedModel(.notIndexed, _) = error else { Issue.record("\(error)"); return }
                }
            }
        }
    }
}
