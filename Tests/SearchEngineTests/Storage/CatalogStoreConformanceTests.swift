import Foundation
import SearchEngine
import TestSupport
import Testing
import Tracking
import VisualSearch

/// The ``CatalogStore`` contract, written only against `any CatalogStore &
/// CollectorStore` and run once per ``StoreFactory`` — a second store passes
/// by passing this suite unchanged.
@Suite("CatalogStore conformance", .timeLimit(.minutes(5)))
struct CatalogStoreConformanceTests {
    // MARK: - The sample catalog every filter and facet test reads

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
        var store: any CatalogStore & CollectorStore { sut.store }

        func names(_ matched: Set<Int64>?) -> Set<String>? {
            matched.map { Set($0.compactMap { id in ids.first { $0.value == id }?.key }) }
        }

        func idsOf(_ names: String...) -> [Int64] { names.compactMap { ids[$0] } }

        func matching(_ filters: [Filter]) async throws -> Set<String>? {
            names(try await store.matchingIDs(filters, schema: try await store.schema()))
        }
    }

    static func seeded(_ factory: StoreFactory) async throws -> Seeded {
        let sut = try await factory.make()
        try await sut.store.declare(schema)
        try await sut.store.upsert(sample, schema: schema)
        let index = try await sut.store.loadIndex()
        return Seeded(sut: sut, ids: Dictionary(uniqueKeysWithValues: zip(index.names, index.ids)))
    }

    // MARK: - Schema

    @Test("a new store is empty, healthy, and declares no fields", arguments: StoreFactory.all)
    func empty(factory: StoreFactory) async throws {
        let store = try await factory.make().store
        #expect(try await store.count() == 0)
        #expect(try await store.schema().fields.isEmpty)
        #expect(try await store.loadIndex().count == 0)
        #expect(try await store.export().isEmpty)
        #expect(try await store.contentHashes().isEmpty)
        #expect(try await store.integrityCheck() == "ok")
        #expect(store.location.isEmpty == false)
    }

    @Test("declare adds fields; declaring one again with its type is fine; another type retypes a field no image has a value for, and is an error for one with values", arguments: StoreFactory.all)
    func declare(factory: StoreFactory) async throws {
        let store = try await factory.make().store
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
            guard case VisualSearchError.invalidParameter(let name, let reason) = error else { return false }
            return name == "schema" && reason.contains("price") && reason.contains("float") && reason.contains("string")
                && reason.contains("2 images have a value")
        }
        // Nothing of the refused declaration was kept, not even its valid field.
        #expect(try await store.schema().fields == ["price": .float, "brand": .string])
    }

    // MARK: - Writing

    @Test("upsert inserts, then replaces by im_name: source, size, hash, vector and the whole metadata", arguments: StoreFactory.all)
    func upsertReplaces(factory: StoreFactory) async throws {
        let seeded = try await Self.seeded(factory)
        let store = seeded.store
        #expect(try await store.count() == 5)

        let replacement = Items.item("a", seed: 99, source: "/elsewhere/a.png", hash: "new-hash", metadata: ["brand": "zeta", "count": "8"])
        try await store.upsert([replacement], schema: Self.schema)

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

    @Test("learned vectors: the recorded model, vectors kept in their stored (Int8, unit) form exactly (or none), a wrong length is refused, another model clears them", arguments: StoreFactory.all)
    func learnedVectors(factory: StoreFactory) async throws {
        let sut = try await factory.make()
        let store = sut.store
        try await store.declare(Self.schema)
        #expect(try await store.learnedModel() == nil)
        var withVector = Items.item("a", seed: 1)
        withVector.learned = Items.learnedVector(1)
        // Without a recorded model a learned vector is refused, before anything is written.
        await #expect(throws: VisualSearchError.self) { try await store.upsert([withVector], schema: Self.schema) }
        #expect(try await store.count() == 0)

        let model = Items.learnedModel()
        let before = try await store.version()
        try await store.recordLearnedModel(model)
        #expect(try await store.version() > before, "engines see the new model")
        try await store.recordLearnedModel(model)
        let recorded = try await store.version()
        #expect(try await sut.openAnother().learnedModel() == model)
        try await store.upsert([withVector, Items.item("b", seed: 2)], schema: Self.schema)
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
        await #expect(throws: VisualSearchError.self) { try await store.upsert([wrong], schema: Self.schema) }
        #expect(try await store.count() == 2)

        // Another model of another length: the old vectors are gone, the new length is accepted.
        try await store.recordLearnedModel(Items.learnedModel(dimension: 32, hash: String(repeating: "77", count: 32)))
        #expect(try await store.loadIndex().learnedCount == 0)
        try await store.upsert([wrong], schema: Self.schema)
        let after = try await store.loadIndex(learned: .exact)
        let row = try #require(after.row(named: "c"))
        #expect(after.learnedDimensions == 32)
        #expect(after.learnedVector(at: row) == wrong.storedLearned)
    }

    @Test("imageNames pages through the names in byte order: upper case before lower, accents after ASCII", arguments: StoreFactory.all)
    func imageNamesPage(factory: StoreFactory) async throws {
        let seeded = try await Self.seeded(factory)
        try await seeded.store.upsert([Items.item("B-upper", seed: 7), Items.item("é", seed: 8), Items.item("a0", seed: 9)], schema: Self.schema)
        let all = ["B-upper", "a", "a0", "b", "c", "d", "e", "é"]
        #expect(try await seeded.store.imageNames(offset: 0, limit: 100) == all)
        #expect(try await seeded.store.imageNames(offset: 0, limit: 3) == Array(all[0..<3]))
        #expect(try await seeded.store.imageNames(offset: 3, limit: 3) == Array(all[3..<6]))
        #expect(try await seeded.store.imageNames(offset: 6, limit: 3) == Array(all[6...]))
        #expect(try await seeded.store.imageNames(offset: 8, limit: 3) == [])
    }

    @Test("upsert refuses metadata that does not fit its field's type, and writes none of the batch", arguments: StoreFactory.all)
    func upsertRejectsMistypedValues(factory: StoreFactory) async throws {
        let seeded = try await Self.seeded(factory)
        let store = seeded.store
        let version = try await store.version()
        let good = Items.item("f", seed: 6, metadata: ["price": "1"])
        for bad in [["price": "cheap"], ["count": "2.5"], ["count": "many"], ["price": "inf"]] {
            await #expect(throws: VisualSearchError.self, "\(bad)") {
                try await store.upsert([good, Items.item("g", seed: 7, metadata: bad)], schema: Self.schema)
            }
        }
        #expect(try await store.count() == 5)
        #expect(try await store.contentHashes()["f"] == nil)
        #expect(try await store.version() == version)
    }

    @Test("updateMetadata replaces metadata, keeps the vector and hash, skips unknown names", arguments: StoreFactory.all)
    func updateMetadata(factory: StoreFactory) async throws {
        let seeded = try await Self.seeded(factory)
        let store = seeded.store
        let before = try await store.loadIndex()
        try await store.updateMetadata([MetadataUpdate(imageName: "b", metadata: ["brand": "beta", "title": "blue teapot"]),
                                        MetadataUpdate(imageName: "nobody", metadata: ["brand": "x"])], schema: Self.schema)
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

    @Test("remove returns how many existed and leaves nothing of them behind", arguments: StoreFactory.all)
    func remove(factory: StoreFactory) async throws {
        let seeded = try await Self.seeded(factory)
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
        guard case .values(_, let counts)? = try await store.facetCounts(["brand"], schema: Self.schema, ids: nil, limit: 10).first else {
            Issue.record("no brand facet")
            return
        }
        #expect(Dictionary(uniqueKeysWithValues: counts.map { ($0.value, $0.count) }) == ["acme": 1, "Acme": 1, "zeta": 1])
    }

    // MARK: - Reading

    @Test("count and contentHashes reflect the images", arguments: StoreFactory.all)
    func countsAndHashes(factory: StoreFactory) async throws {
        let seeded = try await Self.seeded(factory)
        #expect(try await seeded.store.count() == 5)
        #expect(try await seeded.store.contentHashes() == ["a": "hash-a-1", "b": "hash-b-2", "c": "hash-c-3", "d": "hash-d-4", "e": "hash-e-5"])
    }

    @Test("loadIndex round-trips names, sources, vectors and palettes, with one distinct id per image", arguments: StoreFactory.all)
    func loadIndex(factory: StoreFactory) async throws {
        let seeded = try await Self.seeded(factory)
        let index = try await seeded.store.loadIndex()
        #expect(index.count == 5 && index.dimensions == ColorFeatures.dimensions)
        #expect(Set(index.ids).count == 5)
        for (seed, name) in ["a", "b", "c", "d", "e"].enumerated().map({ ($0.offset + 1, $0.element) }) {
            let row = try #require(index.row(named: name))
            #expect(index.names[row] == name)
            #expect(index.sources[row] == "/images/\(name).jpg")
            #expect(index.vector(at: row) == Items.vector(seed), "\(name)'s vector")
            #expect(index.palettes[row] == Items.palette(seed), "\(name)'s palette")
            #expect(index.row(id: index.ids[row]) == row)
        }
        // The order is stable: loading again gives the same rows.
        let again = try await seeded.store.loadIndex()
        #expect(again.names == index.names && again.ids == index.ids)
    }

    @Test("export lists every image by im_name with its stored metadata", arguments: StoreFactory.all)
    func export(factory: StoreFactory) async throws {
        let seeded = try await Self.seeded(factory)
        let exported = try await seeded.store.export()
        #expect(exported.map(\.imageName) == ["a", "b", "c", "d", "e"])
        #expect(exported[0] == ExportedImage(imageName: "a", source: "/images/a.jpg", width: 101, height: 51,
                                             metadata: ["brand": "acme", "title": "Red Running Shoe", "price": "9.5", "count": "3"]))
        #expect(exported[4].metadata == ["brand": "Acme", "count": "7"])
    }

    @Test("upsert refuses a vector of another length than ColorFeatures.dimensions, naming the image, and writes none of the batch",
          arguments: StoreFactory.all)
    func upsertRefusesWrongLengthVectors(factory: StoreFactory) async throws {
        let sut = try await factory.make()
        let store = sut.store
        var short = Items.item("short", seed: 2)
        short.features.removeLast()
        for bad in [short, CatalogItem(imageName: "empty", source: "/x.jpg", width: 1, height: 1, contentHash: "h",
                                       features: [], palette: Items.palette(1), metadata: [:])] {
            await #expect {
                try await store.upsert([Items.item("good", seed: 1), bad], schema: Self.schema)
            } throws: { error in
                guard case VisualSearchError.invalidParameter(let name, let reason) = error else { return false }
                return name == "features" && reason.contains(bad.imageName) && reason.contains("\(ColorFeatures.dimensions)")
            }
        }
        #expect(try await store.count() == 0)
    }

    // MARK: - Insert transactions

    @Test("insert transactions: saved progress round-trips, later saves replace it, another instance sees it, unknown ids are nil",
          arguments: StoreFactory.all)
    func insertTransactions(factory: StoreFactory) async throws {
        let sut = try await factory.make()
        let store = sut.store
        let other = try await sut.openAnother()
        var progress = InsertStatusResponse.Progress(transactionID: "1234567890", processedPercent: 0, total: 3, successCount: 0,
                                                     failCount: 0, startTime: "2026-11-23T10:00:00Z", updateTime: "2026-11-23T10:00:00Z",
                                                     errorList: [])
        try await store.saveInsertTransaction(progress)
        #expect(try await other.insertTransaction("1234567890") == progress)
        progress.processedPercent = 100
        progress.successCount = 2
        progress.failCount = 1
        progress.errorList = [DataAPIError(imageName: "broken", index: 2, code: 400, message: "Invalid image: truncated JPEG")]
        try await other.saveInsertTransaction(progress)
        #expect(try await store.insertTransaction("1234567890") == progress)
        #expect(try await store.insertTransaction("999") == nil)
        #expect(try await store.insertTransaction("x' OR '1'='1") == nil)
        let versions = (try await store.version(), try await other.version())
        #expect(try await store.count() == 0, "transactions are not catalog content")
        #expect(versions.0 == versions.1)
    }

    // MARK: - Version

    @Test("the version moves on every committed change and only then; another instance on the same location sees it", arguments: StoreFactory.all)
    func version(factory: StoreFactory) async throws {
        let sut = try await factory.make()
        let store = sut.store
        let other = try await sut.openAnother()
        var seen: Set<Int> = [try await store.version()]

        func expectMoved(_ change: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
            let version = try await store.version()
            #expect(!seen.contains(version), "the version did not move after \(change)", sourceLocation: sourceLocation)
            #expect(try await other.version() == version, "another instance disagrees after \(change)", sourceLocation: sourceLocation)
            seen.insert(version)
        }

        try await store.declare(FieldSchema(fields: ["brand": .string]))
        try await expectMoved("declaring a new field")
        try await store.upsert([Items.item("a", seed: 1, metadata: ["brand": "x"])], schema: Self.schema)
        try await expectMoved("an upsert")
        try await store.upsert([Items.item("a", seed: 2)], schema: Self.schema)
        try await expectMoved("an upsert that replaces")
        try await store.updateMetadata([MetadataUpdate(imageName: "a", metadata: ["brand": "y"])], schema: Self.schema)
        try await expectMoved("a metadata update")
        #expect(try await store.remove(["a"]) == 1)
        try await expectMoved("a removal")

        // Writes that change nothing leave it where it is.
        let settled = try await store.version()
        try await store.upsert([], schema: Self.schema)
        try await store.declare(FieldSchema(fields: ["brand": .string]))
        try await store.updateMetadata([MetadataUpdate(imageName: "nobody", metadata: ["brand": "z"])], schema: Self.schema)
        #expect(try await store.remove(["a", "nobody"]) == 0)
        #expect(try await store.version() == settled, "a write that changed nothing moved the version")

        // Another instance's writes are seen here too.
        try await other.upsert([Items.item("b", seed: 3)], schema: Self.schema)
        let version = try await other.version()
        #expect(!seen.contains(version))
        #expect(try await store.version() == version)
        #expect(try await store.count() == 1)
        #expect(try await store.loadIndex().names == ["b"])
        #expect(try await store.schema().fields == ["brand": .string])
    }

    // MARK: - Filters

    struct FilterCase: Sendable, CustomTestStringConvertible {
        let filters: [Filter]
        let expected: Set<String>
        init(_ field: String, _ value: String, _ expected: Set<String>) {
            filters = [Filter(field: field, value: value)]
            self.expected = expected
        }
        init(_ filters: [Filter], _ expected: Set<String>) {
            self.filters = filters
            self.expected = expected
        }
        var testDescription: String { filters.map { "\($0.field):\($0.value)" }.joined(separator: " AND ") + " → \(expected.sorted())" }
    }

    static let stringCases: [FilterCase] = [
        FilterCase("brand", "acme", ["a", "b"]),
        FilterCase("brand", "Acme", ["e"]),
        FilterCase("brand", "ACME", []),
        FilterCase("brand", "acm", []),
        FilterCase("brand", "acme ", []),
        FilterCase("brand", "' OR '1'='1", []),
        FilterCase("brand", "x\"; DROP TABLE images; --", []),
        FilterCase("brand", "%", []),
        FilterCase("brand", "*", []),
        FilterCase("color", "red", []),
    ]

    static let textCases: [FilterCase] = [
        FilterCase("title", "shoe", ["a", "c"]),
        FilterCase("title", "SHOE", ["a", "c"]),
        FilterCase("title", "shoe red", ["a"]),
        FilterCase("title", "Red shoe running", ["a"]),
        FilterCase("title", "cafe", ["b"]),
        FilterCase("title", "CAFÉ MUG", ["b"]),
        FilterCase("title", "lait café", ["b"]),
        FilterCase("title", "shoe mug", []),
        FilterCase("title", "sho", []),
        // Query syntax is never interpreted: operators, columns, quotes and SQL are plain words.
        FilterCase("title", "shoe OR mug", []),
        FilterCase("title", "shoe NOT red", []),
        FilterCase("title", "NEAR(shoe red)", []),
        FilterCase("title", "title:shoe", []),
        FilterCase("title", "\"quoted\" OR", ["d"]),
        FilterCase("title", "'; DROP TABLE images; --", []),
        FilterCase("title", "\") OR 1=1 --", []),
    ]

    static let numberCases: [FilterCase] = [
        FilterCase("price", "20", ["b"]),
        FilterCase("price", "20.0", ["b"]),
        FilterCase("price", " 15 ", ["d"]),
        FilterCase("price", "9.5,20", ["a", "b", "d"]),
        FilterCase("price", "420.2,420.2", ["c"]),
        FilterCase("price", "9.6,19.9", ["d"]),
        FilterCase("price", "1000,2000", []),
        FilterCase("price", "-1e9,1e9", ["a", "b", "c", "d"]),
        FilterCase("count", "-2", ["d"]),
        FilterCase("count", "3", ["a"]),
        FilterCase("count", "3.0", ["a"]),
        FilterCase("count", "0,7", ["a", "c", "e"]),
        FilterCase("rating", "0,5", []),
    ]

    static let combinedCases: [FilterCase] = [
        FilterCase([Filter(field: "brand", value: "acme"), Filter(field: "title", value: "shoe")], ["a"]),
        FilterCase([Filter(field: "brand", value: "acme"), Filter(field: "price", value: "10,30")], ["b"]),
        FilterCase([Filter(field: "count", value: "0,10"), Filter(field: "price", value: "0,100")], ["a", "b"]),
        FilterCase([Filter(field: "brand", value: "acme"), Filter(field: "brand", value: "beta")], []),
    ]

    @Test("string fields match exactly (case-sensitive, no patterns)", arguments: StoreFactory.all, stringCases)
    func stringFilters(factory: StoreFactory, filter: FilterCase) async throws {
        let seeded = try await Self.seeded(factory)
        #expect(try await seeded.matching(filter.filters) == filter.expected)
    }

    @Test("text fields match by words: all of them, any order, case- and accent-insensitive, no query syntax",
          arguments: StoreFactory.all, textCases)
    func textFilters(factory: StoreFactory, filter: FilterCase) async throws {
        let seeded = try await Self.seeded(factory)
        #expect(try await seeded.matching(filter.filters) == filter.expected)
        #expect(try await seeded.store.count() == 5)
        #expect(try await seeded.store.integrityCheck() == "ok")
    }

    @Test("int and float fields match a value exactly or min,max inclusively", arguments: StoreFactory.all, numberCases)
    func numericFilters(factory: StoreFactory, filter: FilterCase) async throws {
        let seeded = try await Self.seeded(factory)
        #expect(try await seeded.matching(filter.filters) == filter.expected)
    }

    @Test("several filters combine with AND", arguments: StoreFactory.all, combinedCases)
    func combinedFilters(factory: StoreFactory, filter: FilterCase) async throws {
        let seeded = try await Self.seeded(factory)
        #expect(try await seeded.matching(filter.filters) == filter.expected)
    }

    @Test("no filters: nil, meaning every image", arguments: StoreFactory.all)
    func noFilters(factory: StoreFactory) async throws {
        let seeded = try await Self.seeded(factory)
        #expect(try await seeded.store.matchingIDs([], schema: Self.schema) == nil)
    }

    @Test("hostile text is harmless: it matches nothing or is refused as a parameter, and the catalog is intact",
          arguments: StoreFactory.all, ["*", "\"", "'", "-", "^", "+", "(", "\" \"", "a\"b", "NEAR", "AND", "\u{0}", "shoe\u{0}red", "\u{7}\u{1B}[0m",
                                        "shoe*", "{title}: shoe", String(repeating: "shoe ", count: 500)].map(Hostile.init))
    func hostileText(factory: StoreFactory, hostile: Hostile) async throws {
        let value = hostile.value
        let seeded = try await Self.seeded(factory)
        do {
            let matched = try #require(try await seeded.matching([Filter(field: "title", value: value)]))
            #expect(matched.isSubset(of: ["a", "c"]), "\(matched) for \(value.debugDescription)")
        } catch let error as VisualSearchError {
            guard case .invalidParameter(let name, _) = error else {
                Issue.record("\(value.debugDescription) gave \(String(describing: error).debugDescription), not an invalid parameter")
                return
            }
            #expect(name == "fq")
        }
        #expect(try await seeded.store.count() == 5)
        #expect(try await seeded.store.integrityCheck() == "ok")
    }

    /// A hostile value, shown escaped in test output (it may hold control characters).
    struct Hostile: Sendable, CustomTestStringConvertible {
        let value: String
        var testDescription: String { value.count > 40 ? String(value.prefix(40).debugDescription) + "…" : value.debugDescription }
    }

    @Test("an undeclared field is unknownField, listing the declared ones", arguments: StoreFactory.all,
          ["nope", "im_name", "Brand", "brand) OR 1=1 --", "'; DROP TABLE images; --", ""])
    func unknownField(factory: StoreFactory, field: String) async throws {
        let seeded = try await Self.seeded(factory)
        let schema = try await seeded.store.schema()
        await #expect(throws: VisualSearchError.unknownField(field, known: Self.declaredFields)) {
            try await seeded.store.matchingIDs([Filter(field: "brand", value: "acme"), Filter(field: field, value: "x")], schema: schema)
        }
        #expect(try await seeded.store.count() == 5)
    }

    @Test("a malformed number is an invalid fq parameter naming the field", arguments: StoreFactory.all,
          ["abc", "5,1", "1,2,3", "nan", ",", "inf,1", "", "1;DROP TABLE images"])
    func malformedNumber(factory: StoreFactory, value: String) async throws {
        let seeded = try await Self.seeded(factory)
        await #expect {
            try await seeded.store.matchingIDs([Filter(field: "price", value: value)], schema: Self.schema)
        } throws: { error in
            guard case VisualSearchError.invalidParameter(let name, let reason) = error else { return false }
            return name == "fq" && reason.contains("price")
        }
    }

    // MARK: - Value maps

    @Test("valueMaps gives every field, or only the fields asked for; images without values have none", arguments: StoreFactory.all)
    func valueMaps(factory: StoreFactory) async throws {
        let seeded = try await Self.seeded(factory)
        let a = try #require(seeded.ids["a"]), e = try #require(seeded.ids["e"])
        let all = try await seeded.store.valueMaps(for: [a, e], fields: nil)
        #expect(all == [a: ["brand": "acme", "title": "Red Running Shoe", "price": "9.5", "count": "3"],
                        e: ["brand": "Acme", "count": "7"]])
        let some = try await seeded.store.valueMaps(for: [a, e], fields: ["title", "count"])
        #expect(some == [a: ["title": "Red Running Shoe", "count": "3"], e: ["count": "7"]])
        #expect(try await seeded.store.valueMaps(for: [], fields: nil).isEmpty)
        #expect(try await seeded.store.valueMaps(for: [a], fields: []).values.allSatisfy(\.isEmpty))
        #expect(try await seeded.store.valueMaps(for: [a], fields: ["color"]).values.allSatisfy(\.isEmpty))
        #expect(try await seeded.store.valueMaps(for: [987_654_321], fields: nil).values.allSatisfy(\.isEmpty))
    }

    // MARK: - Facets

    @Test("facets: values by descending count then value; numeric min and max; nil range without values", arguments: StoreFactory.all)
    func facets(factory: StoreFactory) async throws {
        let seeded = try await Self.seeded(factory)
        let facets = try await seeded.store.facetCounts(["brand", "price", "count", "color", "rating"], schema: Self.schema, ids: nil, limit: 10)
        #expect(facets == [
            .values(field: "brand", counts: [(value: "acme", count: 2), (value: "Acme", count: 1), (value: "beta", count: 1), (value: "zeta", count: 1)]),
            .range(field: "price", min: 9.5, max: 420.2),
            .range(field: "count", min: -2, max: 10),
            .values(field: "color", counts: []),
            .range(field: "rating", min: nil, max: nil),
        ])
    }

    @Test("facets: the limit keeps the most frequent values", arguments: StoreFactory.all)
    func facetLimit(factory: StoreFactory) async throws {
        let seeded = try await Self.seeded(factory)
        #expect(try await seeded.store.facetCounts(["brand"], schema: Self.schema, ids: nil, limit: 2)
            == [.values(field: "brand", counts: [(value: "acme", count: 2), (value: "Acme", count: 1)])])
        #expect(try await seeded.store.facetCounts(["brand"], schema: Self.schema, ids: nil, limit: 1)
            == [.values(field: "brand", counts: [(value: "acme", count: 2)])])
    }

    @Test("facets count only the given images; an empty scope has no values and no range", arguments: StoreFactory.all)
    func facetScope(factory: StoreFactory) async throws {
        let seeded = try await Self.seeded(factory)
        let scoped = try await seeded.store.facetCounts(["brand", "price"], schema: Self.schema, ids: seeded.idsOf("c", "d", "e"), limit: 10)
        #expect(scoped == [
            .values(field: "brand", counts: [(value: "Acme", count: 1), (value: "beta", count: 1), (value: "zeta", count: 1)]),
            .range(field: "price", min: 15, max: 420.2),
        ])
        let none = try await seeded.store.facetCounts(["brand", "price"], schema: Self.schema, ids: [], limit: 10)
        #expect(none == [.values(field: "brand", counts: []), .range(field: "price", min: nil, max: nil)])
    }

    @Test("facets: * is every declared field (sorted), duplicates count once, an unknown field is unknownField", arguments: StoreFactory.all)
    func facetFields(factory: StoreFactory) async throws {
        let seeded = try await Self.seeded(factory)
        let all = try await seeded.store.facetCounts(["*", "brand"], schema: Self.schema, ids: nil, limit: 10)
        #expect(all.map(\.field) == Self.declaredFields)
        await #expect(throws: VisualSearchError.unknownField("nope", known: Self.declaredFields)) {
            try await seeded.store.facetCounts(["brand", "nope"], schema: Self.schema, ids: nil, limit: 10)
        }
    }

    @Test("integrityCheck is ok after writes of every kind", arguments: StoreFactory.all)
    func integrity(factory: StoreFactory) async throws {
        let seeded = try await Self.seeded(factory)
        try await seeded.store.updateMetadata([MetadataUpdate(imageName: "a", metadata: ["title": "x y z"])], schema: Self.schema)
        _ = try await seeded.store.remove(["b"])
        #expect(try await seeded.store.integrityCheck() == "ok")
    }
}

extension FieldAggregate {
    /// The field an aggregate is about.
    var field: String {
        switch self {
        case .values(let field, _), .range(let field, _, _): field
        }
    }
}
