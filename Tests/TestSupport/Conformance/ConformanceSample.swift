import Foundation
import SearchEngine
import Testing
import Tracking
import VisualSearch

/// The sample catalog the role conformance suites read and write.
enum ConformanceSample {
    static let schema = FieldSchema(fields: [
        "brand": .string, "title": .text, "price": .float, "count": .int,
        "color": .string, "rating": .float,  // declared, but no image has a value
    ])
    static let declaredFields = ["brand", "color", "count", "price", "rating", "title"]

    /// Five images; `e` has no title and an empty price (empty values are not stored).
    static let sample: [CatalogItem] = [
        Items.item("a", seed: 1, metadata: ["brand": "acme", "title": "Red Running Shoe", "price": "9.5", "count": "3"]),
        Items.item("b", seed: 2, metadata: ["brand": "acme", "title": "Café au lait mug", "price": "20", "count": "10"]),
        Items.item("c", seed: 3, metadata: ["brand": "beta", "title": "shoe horn, blue", "price": "420.2", "count": "0"]),
        Items.item("d", seed: 4, metadata: ["brand": "zeta", "title": "\"quoted\" OR title:*", "price": "15", "count": "-2"]),
        Items.item("e", seed: 5, metadata: ["brand": "Acme", "price": "", "count": "7"]),
    ]

    /// A store holding ``sample``, with the ids it gave each image.
    struct Seeded {
        let sut: StoreUnderTest
        let ids: [String: Int64]
        var store: any CatalogStore { sut.store }

        func names(_ matched: Set<Int64>?) -> Set<String>? {
            matched.map { Set($0.compactMap { id in ids.first { $0.value == id }?.key }) }
        }

        func idsOf(_ names: String...) -> [Int64] { names.compactMap { ids[$0] } }

        func matching(_ filters: [Filter]) async throws -> Set<String>? {
            names(try await store.matchingIDs(filters, schema: try await store.schema()))
        }
    }

    /// Runs `body` with a fresh store holding ``sample``, open for `body`'s length.
    static func withSeeded(_ factory: StoreFactory, _ body: (Seeded) async throws -> Void) async throws {
        try await factory.withStore { sut async throws in
            try await sut.store.declare(schema)
            try await sut.store.upsert(sample, schema: schema)
            let index = try await sut.store.loadIndex()
            try await body(Seeded(sut: sut, ids: Dictionary(uniqueKeysWithValues: zip(index.names, index.ids))))
        }
    }
}
