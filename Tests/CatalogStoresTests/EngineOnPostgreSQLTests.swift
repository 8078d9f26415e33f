import Foundation
import ImageOps
@testable import SearchEngine
import TestSupport
import Testing
import Tracking
import VisualSearch
import SQLiteCatalog
import PostgreSQLCatalog
import CatalogStores

/// The engine on a ``NearestNeighbourStore`` (PostgreSQL runs k-NN itself):
/// with `knn=exact` it answers exactly as on SQLite (the in-memory scan), and
/// with the HNSW index filtered pages are still full and nearly the same.
@Suite("The engine with k-NN in PostgreSQL", .enabled(if: PostgreSQLTestDatabase.isRequired), .timeLimit(.minutes(10)))
struct EngineOnPostgreSQLTests {
    static let schema = FieldSchema(fields: ["brand": .string, "title": .text, "price": .float])
    static let words = ["red", "blue", "shoe", "mug", "café", "bag", "linen", "wool"]

    /// `count` images: ten brands (10 % each), two title words, a price 0–99;
    /// and 25 copies of img00005's vector under other names (the same photo
    /// as several products), whose equal scores must rank by name on every store.
    static func items(_ count: Int) -> [CatalogItem] {
        (0..<count).map { i in
            Items.item(String(format: "img%05d", i), seed: i, metadata: [
                "brand": "b\(i % 10)", "title": "\(words[i % 8]) \(words[(i / 8) % 8])", "price": String(i % 100),
            ])
        } + (0..<25).map { i in Items.item(String(format: "copy%02d", 24 - i), seed: 5, metadata: ["brand": "b\(i % 2 + 3)"]) }
    }

    /// Runs `body` with the same catalog in SQLite and in PostgreSQL (with `parameters` in its URL), open for `body`'s length.
    /// With `learned`, every image but each seventh also has a learned vector of ``Items/learnedModel(dimension:hash:)``
    /// (the copies share img00005's, as their colour vector).
    static func withEngines(_ count: Int, parameters: String,
                            configuration: VisualSearchEngine.Configuration = VisualSearchEngine.Configuration(), learned: Bool = false,
                            _ body: (_ sqlite: VisualSearchEngine, _ postgres: VisualSearchEngine) async throws -> Void) async throws {
        var items = items(count)
        if learned {
            for index in items.indices where index % 7 != 6 {
                items[index].learned = Items.learnedVector(items[index].imageName.hasPrefix("copy") ? 5 : index)
            }
        }
        let sqlite = try await SQLiteCatalogStore(path: Repository.temporaryDirectory("knn") + "/catalog.sqlite", creating: true)
        try await PostgreSQLCatalogStore.withStore(try PostgreSQLSettings(url: try PostgreSQLTestDatabase.freshURL("&pool_size=3&connect_timeout=30&" + parameters)), creating: true) { postgres async throws in
            for store in [sqlite, postgres] as [any CatalogStore] {
                try await store.declare(schema)
                if learned { try await store.recordLearnedModel(Items.learnedModel()) }
                for batch in stride(from: 0, to: items.count, by: 500) {
                    try await store.upsert(Array(items[batch..<min(items.count, batch + 500)]), schema: schema)
                }
            }
            var scan = configuration
            scan.nearestNeighbours.mode = .exact  // the reference: the in-memory scan, not the embedded HNSW index
            try await body(try await OpenedCatalog(sqlite: sqlite).engine(configuration: scan),
                           try await OpenedCatalog(postgreSQL: postgres).engine(configuration: configuration))
        }
    }

    /// A response as JSON without its request id, for equality.
    static func json(_ response: SearchResponse) throws -> String {
        var response = response
        response.requestID = nil
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(response), as: UTF8.self)
    }

    /// Parameter sets that reach every part of a query: filters of each
    /// type, score ranges, paging, dedup, facets, fields.
    static let parameterSets: [(String, @Sendable (inout SearchParameters) -> Void)] = [
        ("defaults", { _ in }),
        ("limit 50, scores", { $0.limit = 50 }),
        ("page 3 of 7", { $0.page = 3; $0.limit = 7 }),
        ("past the last page", { $0.page = 1000; $0.limit = 10 }),
        ("string fq", { $0.filters = [Filter(field: "brand", value: "b3")]; $0.limit = 30 }),
        ("text fq", { $0.filters = [Filter(field: "title", value: "Cafe shoe")] }),
        ("number range fq", { $0.filters = [Filter(field: "price", value: "10,30")]; $0.limit = 20 }),
        ("two fq", { $0.filters = [Filter(field: "brand", value: "b1"), Filter(field: "price", value: "0,50")] }),
        ("fq matching nothing", { $0.filters = [Filter(field: "brand", value: "none")] }),
        ("score_min", { $0.scoreMin = 0.3; $0.limit = 100 }),
        ("score range and fq", { $0.scoreMin = 0.28; $0.scoreMax = 0.32; $0.filters = [Filter(field: "brand", value: "b2")] }),
        ("dedup", { $0.deduplicates = true; $0.dedupScoreThreshold = 0.31; $0.limit = 20 }),
        ("facets", { $0.facets = ["brand", "price"]; $0.facetsShowCount = true; $0.facetsLimit = 4 }),
        ("facets under fq", { $0.facets = ["brand", "title"]; $0.filters = [Filter(field: "price", value: "5,9")] }),
        ("fields", { $0.fields = ["brand", "price"]; $0.limit = 5 }),
        ("all fields", { $0.returnsAllFields = true; $0.limit = 5 }),
    ]

    @Test("knn=exact answers every search and recommendation exactly as the in-memory scan over SQLite")
    func exactEqualsInMemory() async throws {
        try await Self.withEngines(400, parameters: "knn=exact") { sqlite, postgres async throws in
            // img00003 passes the b3 filter itself (a recommendation's total is one less); img00005 has 25 equal-score copies.
            for query in ["img00000", "img00003", "img00005", "img00137", "img00399"] {
                for (label, configure) in Self.parameterSets {
                    var parameters = SearchParameters()
                    parameters.includesScore = true
                    configure(&parameters)
                    let search = SearchRequest(imageName: query, parameters: parameters)
                    #expect(try Self.json(await postgres.search(search)) == Self.json(await sqlite.search(search)), "search \(query) \(label)")
                    let recommend = RecommendationsRequest(imageName: query, parameters: parameters)
                    #expect(try Self.json(await postgres.recommendations(recommend)) == Self.json(await sqlite.recommendations(recommend)),
                            "recommendations \(query) \(label)")
                }
            }
            let color = ColorSearchRequest(color: try HexColor(parsing: "c84028"), parameters: SearchParameters())
            #expect(try Self.json(await postgres.colorSearch(color)) == Self.json(await sqlite.colorSearch(color)))
            #expect(await postgres.sources(of: ["img00001", "nope"]) == ["img00001": "/images/img00001.jpg"])
            await #expect(throws: VisualSearchError.imageNotFound("nope")) {
                try await postgres.search(SearchRequest(imageName: "nope"))
            }
        }
    }

    @Test("learned vectors: knn=exact answers visual and fused searches and recommendations exactly as the in-memory scan over SQLite")
    func learnedExactEqualsInMemory() async throws {
        try await Self.withEngines(300, parameters: "knn=exact", learned: true) { sqlite, postgres async throws in
            // img00006 has no learned vector (each seventh); img00005 has 25 copies with the same vectors.
            for mode in [SimilarityMode.visual, .fused] {
                for query in ["img00000", "img00005", "img00137"] {
                    for (label, configure) in Self.parameterSets {
                        var parameters = SearchParameters()
                        parameters.includesScore = true
                        parameters.similarity = mode
                        configure(&parameters)
                        let search = SearchRequest(imageName: query, parameters: parameters)
                        let inMemory = try await sqlite.search(search)
                        #expect(inMemory.similarity == mode)
                        #expect(try Self.json(await postgres.search(search)) == Self.json(inMemory), "\(mode) search \(query) \(label)")
                        let recommend = RecommendationsRequest(imageName: query, parameters: parameters)
                        #expect(try Self.json(await postgres.recommendations(recommend)) == Self.json(await sqlite.recommendations(recommend)),
                                "\(mode) recommendations \(query) \(label)")
                    }
                }
                var parameters = SearchParameters()
                parameters.similarity = mode
                for engine in [sqlite, postgres] {
                    await #expect {
                        _ = try await engine.search(SearchRequest(imageName: "img00006", parameters: parameters))
                    } throws: { error in
                        guard case .learnedModel(.notIndexed, _) = error as? VisualSearchError else { return false }
                        return true
                    }
                }
            }
        }
    }

    @Test("learned vectors through the HNSW index: full pages, nearly what the exact scan finds")
    func learnedApproximateIsNearlyExact() async throws {
        try await Self.withEngines(2000, parameters: "knn=approximate&ef_search=100", learned: true) { sqlite, postgres async throws in
            var overlap = 0, total = 0
            for query in ["img00000", "img00137", "img01234", "img01999"] {
                for mode in [SimilarityMode.visual, .fused] {
                    var parameters = SearchParameters()
                    parameters.similarity = mode
                    parameters.limit = 20
                    let exact = try await sqlite.search(SearchRequest(imageName: query, parameters: parameters)).result.map(\.imageName)
                    let approximate = try await postgres.search(SearchRequest(imageName: query, parameters: parameters)).result.map(\.imageName)
                    #expect(approximate.count == 20, "\(mode) \(query)")
                    overlap += Set(exact).intersection(approximate).count
                    total += exact.count
                }
            }
            #expect(Double(overlap) >= 0.9 * Double(total), "recall \(overlap) of \(total)")
        }
    }

    @Test("with collector events, knn=exact blends recommendations exactly as the in-memory scan over SQLite")
    func blendedRecommendationsEqualInMemory() async throws {
        // Both event terms on, strong enough to reorder: co-engagement and popularity.
        var configuration = VisualSearchEngine.Configuration()
        configuration.recommendations = RecommendationBlend(engagementWeight: 0.5, popularityWeight: 0.1)
        try await Self.withEngines(400, parameters: "knn=exact", configuration: configuration) { sqlite, postgres async throws in
            // Shoppers who looked at a query item bought items far from it in colour; a few items are bought often (popular).
            var events: [TrackingEvent] = []
            for (session, (query, bought)) in [("img00000", "img00301"), ("img00000", "img00177"), ("img00003", "img00013"),
                                               ("img00137", "img00301"), ("img00005", "copy03"), ("img00399", "img00250")].enumerated() {
                for (action, item) in [(TrackingAction.productClick, query), (.addToCart, bought), (.transaction, bought)] {
                    events.append(ShopperEvents.event(action, item, query: "q\(session)", session: "s\(session % 4)"))
                }
            }
            for engine in [sqlite, postgres] {
                #expect(try await #require(engine.engagementSource).receive(events).allSatisfy { $0 == .accepted })
            }
            for query in ["img00000", "img00003", "img00005", "img00137", "img00399", "img00222"] {
                for (label, configure) in Self.parameterSets {
                    var parameters = SearchParameters()
                    parameters.includesScore = true
                    configure(&parameters)
                    let recommend = RecommendationsRequest(imageName: query, parameters: parameters)
                    let inMemory = try await sqlite.recommendations(recommend)
                    #expect(try Self.json(await postgres.recommendations(recommend)) == Self.json(inMemory), "recommendations \(query) \(label)")
                }
            }
            // The events changed the answer: what was bought after img00000 is recommended first.
            let first = try await sqlite.recommendations(RecommendationsRequest(imageName: "img00000")).result.first?.imageName
            #expect(first == "img00301" || first == "img00177")
        }
    }

    @Test("auto (exact at this size) answers as SQLite too, and sees another process's insert at once")
    func autoFollowsTheCatalog() async throws {
        try await Self.withEngines(200, parameters: "knn=auto") { sqlite, postgres async throws in
            var parameters = SearchParameters()
            parameters.filters = [Filter(field: "brand", value: "b4")]
            parameters.facets = ["brand"]
            let request = SearchRequest(imageName: "img00004", parameters: parameters)
            #expect(try Self.json(await postgres.search(request)) == Self.json(await sqlite.search(request)))
            #expect(try await postgres.search(request).total == 20 + 12)  // 20 of img, 12 copies
            // A new image of brand b4, written by "another process": the cached total moves with the version.
            try await PostgreSQLCatalogStore.withStore(try #require(postgres.catalog as? PostgreSQLCatalogStore).settings) { other async throws in
                try await other.upsert([Items.item("late", seed: 4, metadata: ["brand": "b4"])], schema: Self.schema)
                let after = try await postgres.search(request)
                #expect(after.total == 33 && after.result.map(\.imageName).contains("late"))

            }
        }
    }

    @Test("the HNSW index with a 10% filter still fills every page, and finds nearly what the exact scan finds")
    func approximateFilteredPagesAreFull() async throws {
        try await Self.withEngines(3000, parameters: "knn=approximate&ef_search=100") { sqlite, postgres async throws in
            var found = 0, wanted = 0
            for query in stride(from: 0, to: 3000, by: 150) {
                let name = String(format: "img%05d", query)
                for filters in [[], [Filter(field: "brand", value: "b7")]] {
                    var parameters = SearchParameters()
                    parameters.limit = 20
                    parameters.filters = filters
                    let request = SearchRequest(imageName: name, parameters: parameters)
                    let approximate = try await postgres.search(request), exact = try await sqlite.search(request)
                    #expect(approximate.result.count == 20 && approximate.total == exact.total, "\(name) \(filters)")
                    if !filters.isEmpty {
                        let brands = try await postgres.search(SearchRequest(imageName: name, parameters: {
                            var p = parameters; p.fields = ["brand"]; return p }()))
                        #expect(brands.result.allSatisfy { $0.valueMap?["brand"] == "b7" })
                    }
                    found += Set(approximate.result.map(\.imageName)).intersection(exact.result.map(\.imageName)).count
                    wanted += exact.result.count
                }
            }
            let recall = Double(found) / Double(wanted)
            #expect(recall >= 0.9, "recall@20 \(recall)")
        }
    }

    @Test("an upload searched with two vectors (a banner: the whole image and its proposal) answers exactly as on SQLite, score ranges included")
    func proposalQueriesEqualInMemory() async throws {
        let sqlite = try await SQLiteCatalogStore(path: Repository.temporaryDirectory("proposal") + "/catalog.sqlite", creating: true)
        try await PostgreSQLCatalogStore.withStore(try PostgreSQLSettings(url: try PostgreSQLTestDatabase.freshURL("&pool_size=3&connect_timeout=30&knn=exact")), creating: true) { postgres async throws in
            let metadata = try MetadataTable(contentsOf: Repository.metadata)
            for store in [sqlite, postgres] as [any CatalogStore] {
                _ = try await Indexer(store: store).run(directory: Repository.images, metadata: metadata)
            }
            let engines = (try await OpenedCatalog(sqlite: sqlite).engine(), try await OpenedCatalog(postgreSQL: postgres).engine())
            let cup = try ImageDecoder.decode(Repository.bytes("coffee_cup.jpg"), source: "cup").pixels
            let banner = try ImageEncoders.PNG().encode(Canvas.banner(cup).0)
            #expect(try FeaturePipeline().query(banner, box: nil).vectors.count == 2)
            for (label, configure) in Self.parameterSets where !label.contains("fq") || label == "string fq" {
                var parameters = SearchParameters()
                parameters.includesScore = true
                configure(&parameters)
                if label == "string fq" { parameters.filters = [Filter(field: "brand", value: "scikit-image")] }
                let request = UploadSearchRequest(ImageQuery(.bytes(banner)), parameters: parameters)
                let (inMemory, inStore) = (try await engines.0.uploadSearch(request), try await engines.1.uploadSearch(request))
                #expect(try Self.json(inStore) == Self.json(inMemory), "\(label)")
                if label == "defaults" { #expect(inMemory.result.first?.imageName == "coffee_cup") }
            }
        }
    }
}
