import Foundation
import SearchEngine
import Testing
import Tracking
import VisualSearch

/// The ``CatalogWriter`` contract: declaring fields, upserts by `im_name`, learned
/// vectors, metadata updates, removal, what is refused before anything is
/// written, and the version every committed change moves — run by each
/// store's test target.
public enum CatalogWriterConformance {
    /// Every check of the contract, each naming the stores it applies to.
    public static var checks: [ConformanceCheck] {
        var checks: [ConformanceCheck] = []
        checks.append(ConformanceCheck("declare adds fields; declaring one again with its type is fine; another type retypes a field no image has a value for, and is an error for one with values", stores: [.sqlite, .postgreSQL, .inMemory]) { kind in
            let factory = StoreFactory(kind)
            try await factory.withStore { sut async throws in
                let store = sut.store
                try await store.declare(FieldSchema(fields: ["price": .int]))
                try await store.declare(FieldSchema(fields: ["price": .int, "brand": .string]))
                #expect(try await store.schema().fields == ["price": .int, "brand": .string])
                let versionBefore = try await store.version()
                // No image has a price yet: a wrong type is not a lock.
                try await store.declare(FieldSchema(fields: ["price": .float]))
                #expect(try await store.schema().fields == ["price": .float, "brand": .string])
                #expect(try await store.version() > versionBefore, "engines see the new type")

                let schema = FieldSchema(fields: ["price": .float, "brand": .string])
                try await store.upsert([Items.item("a", seed: 1, metadata: ["price": "9.5"]), Items.item("b", seed: 2, metadata: ["price": "3"])],
                                       schema: schema)
                await #expect {
                    try await store.declare(FieldSchema(fields: ["price": .string, "title": .text]))
                } throws: { error in
                    guard case CatalogStoreError.invalidValue(let name, let reason) = error else { return false }
                    return name == "schema" && reason.contains("price") && reason.contains("float") && reason.contains("string")
                        && reason.contains("2 images have a value")
                }
                // Nothing of the refused declaration was kept, not even its valid field.
                #expect(try await store.schema().fields == ["price": .float, "brand": .string])
            }
        })
        checks.append(ConformanceCheck("upsert inserts, then replaces by im_name: source, size, hash, vector and the whole metadata", stores: [.sqlite, .postgreSQL, .inMemory]) { kind in
            let factory = StoreFactory(kind)
            try await ConformanceSample.withSeeded(factory) { seeded async throws in
                let store = seeded.store
                #expect(try await store.count() == 5)

                let replacement = Items.item("a", seed: 99, source: "/elsewhere/a.png", hash: "new-hash", metadata: ["brand": "zeta", "count": "8"])
                try await store.upsert([replacement], schema: ConformanceSample.schema)

                #expect(try await store.count() == 5)
                let exported = try #require(try await store.export().first { $0.imageName == "a" })
                #expect(exported == ExportedImage(imageName: "a", source: "/elsewhere/a.png", width: 199, height: 149,
                                                  metadata: ["brand": "zeta", "count": "8"]))
                #expect(try await store.contentHashes()["a"] == "new-hash")
                let index = try await store.loadIndex()
                let row = try #require(index.row(named: "a"))
                #expect(index.vector(at: row) == Items.vector(99))
                // The old metadata is gone from every query path, including the full-text index.
                #expect(try await seeded.matching([Filter(field: "title", value: "running")]) == [])
                #expect(try await seeded.matching([Filter(field: "price", value: "9.5")]) == [])
                #expect(try await seeded.matching([Filter(field: "brand", value: "zeta")]) == ["a", "d"])
            }
        })
        checks.append(ConformanceCheck("learned vectors: the recorded model, vectors kept in their stored (Int8, unit) form exactly (or none), a wrong length is refused, another model clears them", stores: [.sqlite, .postgreSQL, .inMemory]) { kind in
            let factory = StoreFactory(kind)
            try await factory.withStore { sut async throws in
                let store = sut.store
                try await store.declare(ConformanceSample.schema)
                #expect(try await store.learnedModel() == nil)
                var withVector = Items.item("a", seed: 1)
                withVector.learned = Items.learnedVector(1)
                // Without a recorded model a learned vector is refused, before anything is written.
                await #expect(throws: CatalogStoreError.self) { try await store.upsert([withVector], schema: ConformanceSample.schema) }
                #expect(try await store.count() == 0)

                let model = Items.learnedModel()
                let before = try await store.version()
                try await store.recordLearnedModel(model)
                #expect(try await store.version() > before, "engines see the new model")
                try await store.recordLearnedModel(model)
                let recorded = try await store.version()
                try await sut.withAnother { another async throws in #expect(try await another.store.learnedModel() == model) }
                try await store.upsert([withVector, Items.item("b", seed: 2)], schema: ConformanceSample.schema)
                #expect(try await store.version() > recorded)
                let index = try await store.loadIndex(learned: .exact)
                #expect(index.learnedDimensions == 64 && index.learnedCount == 1)
                let rowA = try #require(index.row(named: "a")), rowB = try #require(index.row(named: "b"))
                #expect(index.learnedVector(at: rowA) == withVector.storedLearned)
                #expect(zip(try #require(withVector.storedLearned), Items.learnedVector(1)).allSatisfy { abs($0 - $1) < 0.01 })
                #expect(index.learnedVector(at: rowB) == nil)
                #expect(try await store.loadIndex(learned: .none).learnedDimensions == 0)

                var wrong = Items.item("c", seed: 3)
                wrong.learned = Items.learnedVector(3, dimension: 32)
                await #expect(throws: CatalogStoreError.self) { try await store.upsert([wrong], schema: ConformanceSample.schema) }
                #expect(try await store.count() == 2)

                // The same model under another name and version (the same vectors, EmbeddingDescriptor.makesSameVectors):
                // recorded, and the vectors kept — the indexer will not recompute them.
                var renamed = model
                renamed.name = "test-model-renamed"
                renamed.version = "2"
                try await store.recordLearnedModel(renamed)
                #expect(try await store.learnedModel() == renamed)
                let kept = try await store.loadIndex(learned: .exact)
                #expect(kept.learnedVector(at: try #require(kept.row(named: "a"))) == withVector.storedLearned)

                // Another model of another length: the old vectors are gone, the new length is accepted.
                try await store.recordLearnedModel(Items.learnedModel(dimension: 32, hash: String(repeating: "77", count: 32)))
                #expect(try await store.loadIndex().learnedCount == 0)
                try await store.upsert([wrong], schema: ConformanceSample.schema)
                let after = try await store.loadIndex(learned: .exact)
                let row = try #require(after.row(named: "c"))
                #expect(after.learnedDimensions == 32)
                #expect(after.learnedVector(at: row) == wrong.storedLearned)
            }
        })
        checks.append(ConformanceCheck("upsert refuses metadata that does not fit its field's type, and writes none of the batch", stores: [.sqlite, .postgreSQL, .inMemory]) { kind in
            let factory = StoreFactory(kind)
            try await ConformanceSample.withSeeded(factory) { seeded async throws in
                let store = seeded.store
                let version = try await store.version()
                let good = Items.item("f", seed: 6, metadata: ["price": "1"])
                for bad in [["price": "cheap"], ["count": "2.5"], ["count": "many"], ["price": "inf"]] {
                    await #expect(throws: CatalogStoreError.self, "\(bad)") {
                        try await store.upsert([good, Items.item("g", seed: 7, metadata: bad)], schema: ConformanceSample.schema)
                    }
                }
                #expect(try await store.count() == 5)
                #expect(try await store.contentHashes()["f"] == nil)
                #expect(try await store.version() == version)
            }
        })
        checks.append(ConformanceCheck("updateMetadata replaces metadata, keeps the vector and hash, skips unknown names", stores: [.sqlite, .postgreSQL, .inMemory]) { kind in
            let factory = StoreFactory(kind)
            try await ConformanceSample.withSeeded(factory) { seeded async throws in
                let store = seeded.store
                let before = try await store.loadIndex()
                try await store.updateMetadata([MetadataUpdate(imageName: "b", metadata: ["brand": "beta", "title": "blue teapot"]),
                                                MetadataUpdate(imageName: "nobody", metadata: ["brand": "x"])], schema: ConformanceSample.schema)
                #expect(try await store.count() == 5)
                let b = try #require(seeded.ids["b"])
                #expect(try await store.valueMaps(for: [b], fields: nil) == [b: ["brand": "beta", "title": "blue teapot"]])
                #expect(try await seeded.matching([Filter(field: "title", value: "teapot")]) == ["b"])
                #expect(try await seeded.matching([Filter(field: "title", value: "mug")]) == [])
                #expect(try await seeded.matching([Filter(field: "price", value: "20")]) == [])
                let after = try await store.loadIndex()
                #expect(after.names == before.names && after.vectors == before.vectors)
                #expect(try await store.contentHashes()["b"] == "hash-b-2")
                #expect(try await store.export().contains { $0.imageName == "nobody" } == false)
            }
        })
        checks.append(ConformanceCheck("remove returns how many existed and leaves nothing of them behind", stores: [.sqlite, .postgreSQL, .inMemory]) { kind in
            let factory = StoreFactory(kind)
            try await ConformanceSample.withSeeded(factory) { seeded async throws in
                let store = seeded.store
                #expect(try await store.remove(["a", "missing", "a", "c"]) == 2)
                #expect(try await store.remove(["missing"]) == 0)
                #expect(try await store.remove([]) == 0)
                #expect(try await store.count() == 3)
                #expect(try await store.loadIndex().names.sorted() == ["b", "d", "e"])
                #expect(try await store.contentHashes().keys.sorted() == ["b", "d", "e"])
                #expect(try await store.export().map(\.imageName) == ["b", "d", "e"])
                #expect(try await seeded.matching([Filter(field: "title", value: "shoe")]) == [])
                #expect(try await seeded.matching([Filter(field: "brand", value: "acme")]) == ["b"])
                #expect(try await store.valueMaps(for: seeded.idsOf("a", "c"), fields: nil).values.allSatisfy(\.isEmpty))
                guard case .values(_, let counts)? = try await store.facetCounts(["brand"], schema: ConformanceSample.schema, ids: nil, limit: 10).first else {
                    Issue.record("no brand facet")
                    return
                }
                #expect(Dictionary(uniqueKeysWithValues: counts.map { ($0.value, $0.count) }) == ["acme": 1, "Acme": 1, "zeta": 1])
            }
        })
        checks.append(ConformanceCheck("upsert refuses a vector of another length than ColorFeatures.dimensions, naming the image, and writes none of the batch", stores: [.sqlite, .postgreSQL, .inMemory]) { kind in
            let factory = StoreFactory(kind)
            try await factory.withStore { sut async throws in
                let store = sut.store
                var short = Items.item("short", seed: 2)
                short.features.removeLast()
                for bad in [short, CatalogItem(imageName: "empty", source: "/x.jpg", width: 1, height: 1, contentHash: "h",
                                               features: [], palette: Items.palette(1), metadata: [:])] {
                    await #expect {
                        try await store.upsert([Items.item("good", seed: 1), bad], schema: ConformanceSample.schema)
                    } throws: { error in
                        guard case CatalogStoreError.invalidValue(let name, let reason) = error else { return false }
                        return name == "features" && reason.contains(bad.imageName) && reason.contains("\(ColorFeatures.dimensions)")
                    }
                }
                #expect(try await store.count() == 0)
            }
        })
        checks.append(ConformanceCheck("the version moves on every committed change and only then; another instance on the same location sees it", stores: [.sqlite, .postgreSQL, .inMemory]) { kind in
            let factory = StoreFactory(kind)
            try await factory.withStore { sut async throws in
                let store = sut.store
                try await sut.withAnother { another async throws in
                    let other = another.store
                    var seen: Set<Int> = [try await store.version()]

                    func expectMoved(_ change: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
                        let version = try await store.version()
                        #expect(!seen.contains(version), "the version did not move after \(change)", sourceLocation: sourceLocation)
                        #expect(try await other.version() == version, "another instance disagrees after \(change)", sourceLocation: sourceLocation)
                        seen.insert(version)
                    }

                    try await store.declare(FieldSchema(fields: ["brand": .string]))
                    try await expectMoved("declaring a new field")
                    try await store.upsert([Items.item("a", seed: 1, metadata: ["brand": "x"])], schema: ConformanceSample.schema)
                    try await expectMoved("an upsert")
                    try await store.upsert([Items.item("a", seed: 2)], schema: ConformanceSample.schema)
                    try await expectMoved("an upsert that replaces")
                    try await store.updateMetadata([MetadataUpdate(imageName: "a", metadata: ["brand": "y"])], schema: ConformanceSample.schema)
                    try await expectMoved("a metadata update")
                    #expect(try await store.remove(["a"]) == 1)
                    try await expectMoved("a removal")

                    // Writes that change nothing leave it where it is.
                    let settled = try await store.version()
                    try await store.upsert([], schema: ConformanceSample.schema)
                    try await store.declare(FieldSchema(fields: ["brand": .string]))
                    try await store.updateMetadata([MetadataUpdate(imageName: "nobody", metadata: ["brand": "z"])], schema: ConformanceSample.schema)
                    #expect(try await store.remove(["a", "nobody"]) == 0)
                    #expect(try await store.version() == settled, "a write that changed nothing moved the version")

                    // Another instance's writes are seen here too.
                    try await other.upsert([Items.item("b", seed: 3)], schema: ConformanceSample.schema)
                    let version = try await other.version()
                    #expect(!seen.contains(version))
                    #expect(try await store.version() == version)
                    #expect(try await store.count() == 1)
                    #expect(try await store.loadIndex().names == ["b"])
                    #expect(try await store.schema().fields == ["brand": .string])
                }
            }
        })
        return checks
    }
}
