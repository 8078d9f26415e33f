import Foundation
import SQLiteCatalog
import SearchEngine
import ConcurrencyToolkit
import TestSupport
import Testing
import VisualSearch
import CatalogStores

/// The engine on an embedded catalog with its HNSW graphs: `knn=exact`
/// answers exactly what the scan answers, `approximate` finds the same first
/// pages (full, with filters), and a graph never answers for a catalog it
/// has not caught up with.
struct ApproximateSearchTests {
    static let schema = FieldSchema(fields: ["brand": .string, "rare": .string])

    /// A unit vector shaped like a colour descriptor: non-negative, near one of
    /// 40 centres (uniform random vectors in 112 dimensions have no
    /// neighbourhoods at all: every graph index does worst on them).
    static func vector(_ seed: Int) -> [Float] {
        let centre = Items.vector(1_000_000 + seed % 40), noise = Items.vector(seed)
        var values = zip(centre, noise).map { abs($0 + 0.35 * $1) }
        let norm = values.reduce(0) { $0 + $1 * $1 }.squareRoot()
        for i in values.indices { values[i] /= norm }
        return values
    }

    /// A SQLite catalog of `count` images (brand b0…b9, `rare` on 1 in 100).
    static func catalog(_ count: Int = 3000, shift: Int = 0) async throws -> SQLiteCatalogStore {
        let store = try await SQLiteCatalogStore(path: Repository.temporaryDirectory("approximate") + "/catalog.sqlite", creating: true)
        try await store.declare(schema)
        let items = (0..<count).map { seed in
            var item = Items.item(String(format: "v%07d", seed), seed: seed,
                                  metadata: ["brand": "b\(seed % 10)"] + (seed % 100 == 7 ? ["rare": "yes"] : [:]))
            item.features = vector(seed + shift)
            return item
        }
        for start in stride(from: 0, to: count, by: 500) { try await store.upsert(Array(items[start..<min(count, start + 500)]), schema: schema) }
        return store
    }

    static func engine(_ store: SQLiteCatalogStore, mode: NearestNeighbourMode, graphs: Bool = true) async throws -> VisualSearchEngine {
        var configuration = VisualSearchEngine.Configuration()
        configuration.nearestNeighbours.mode = mode
        configuration.nearestNeighbours.efSearch = 200
        configuration.versionCheckInterval = .zero
        configuration.graphFiles = graphs ? store.graphFiles : GraphFiles(directory: Repository.temporaryDirectory("no-graphs") + "/none")
        if !graphs { configuration.graphPolicy = ApproximateIndex.Policy(builds: false, saves: false) }
        return try await OpenedCatalog(sqlite: store).engine(configuration: configuration)
    }

    /// A response without its request id, as JSON: what must be equal byte for byte.
    static func bytes(_ response: SearchResponse) throws -> Data {
        var response = response
        response.requestID = nil
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return try encoder.encode(response)
    }

    /// The requests the parity and recall checks run: plain, paged, filtered (10 % and 1 %), facets, dedup.
    static func variants() throws -> [SearchParameters] {
        var plain = SearchParameters()
        plain.includesScore = true
        plain.returnsAllFields = true
        var paged = plain
        paged.page = 3
        var filtered = plain
        filtered.filters = [try Filter(parsing: "brand:b3")]
        filtered.facets = ["brand"]
        var rare = plain
        rare.filters = [try Filter(parsing: "rare:yes")]
        var dedup = plain
        dedup.deduplicates = true
        return [plain, paged, filtered, rare, dedup]
    }

    @Test("knn=exact answers byte for byte what the scan answers without any index (search, paging, filters, facets, dedup, recommendations)")
    func exactParity() async throws {
        let store = try await Self.catalog()
        let indexed = try await Self.engine(store, mode: .approximate)
        #expect(indexed.approximate?.graphs[.color]?.count == 3000)
        let scan = try await Self.engine(store, mode: .exact, graphs: false)
        for parameters in try Self.variants() {
            var exact = parameters
            exact.nearestNeighbours = .exact
            for seed in [0, 17, 1234, 2999] {
                let name = String(format: "v%07d", seed)
                #expect(try Self.bytes(try await indexed.search(SearchRequest(imageName: name, parameters: exact)))
                        == Self.bytes(try await scan.search(SearchRequest(imageName: name, parameters: parameters))))
                #expect(try Self.bytes(try await indexed.recommendations(RecommendationsRequest(imageName: name, parameters: exact)))
                        == Self.bytes(try await scan.recommendations(RecommendationsRequest(imageName: name, parameters: parameters))))
                #expect(try Self.bytes(try await indexed.vectorSearch(Self.vector(seed + 90_000), parameters: exact))
                        == Self.bytes(try await scan.vectorSearch(Self.vector(seed + 90_000), parameters: parameters)))
            }
        }
    }

    @Test("approximate: the first pages of unseen queries at recall ≥ 0.98, filtered pages full, totals and facets those of the scan")
    func approximateRecall() async throws {
        let store = try await Self.catalog()
        let indexed = try await Self.engine(store, mode: .approximate)
        let scan = try await Self.engine(store, mode: .exact, graphs: false)
        for parameters in try Self.variants() where !parameters.deduplicates {
            var found = 0, wanted = 0
            for seed in 50_000..<50_040 {
                let approximate = try await indexed.vectorSearch(Self.vector(seed), parameters: parameters)
                let exact = try await scan.vectorSearch(Self.vector(seed), parameters: parameters)
                #expect(approximate.result.count == exact.result.count)  // full pages
                #expect(approximate.total == exact.total && approximate.facets == exact.facets)
                let names = Set(approximate.result.map(\.imageName))
                found += exact.result.filter { names.contains($0.imageName) }.count
                wanted += exact.result.count
                // A result's score is the exact one.
                let exactScores = Dictionary(exact.result.map { ($0.imageName, $0.score) }, uniquingKeysWith: { a, _ in a })
                for result in approximate.result { if let score = exactScores[result.imageName] { #expect(result.score == score) } }
            }
            #expect(Double(found) / Double(wanted) >= 0.98, "\(parameters.filters) page \(parameters.page)")
        }
    }

    @Test("recommendations never return the query image; total is the scan's")
    func recommendations() async throws {
        let store = try await Self.catalog()
        let indexed = try await Self.engine(store, mode: .approximate)
        let scan = try await Self.engine(store, mode: .exact, graphs: false)
        var parameters = SearchParameters()
        parameters.filters = [try Filter(parsing: "brand:b4")]
        for seed in [4, 14, 1004] {
            let name = String(format: "v%07d", seed)
            let approximate = try await indexed.recommendations(RecommendationsRequest(imageName: name, parameters: parameters))
            let exact = try await scan.recommendations(RecommendationsRequest(imageName: name, parameters: parameters))
            #expect(!approximate.result.contains { $0.imageName == name } && approximate.total == exact.total && approximate.result.count == 10)
        }
    }

    @Test("auto scans exactly below exact_below, for score ranges and for selective filters; a request's knn overrides the setting")
    func autoAndOverride() async throws {
        let store = try await Self.catalog(1500)
        var configuration = VisualSearchEngine.Configuration()
        configuration.nearestNeighbours.exactBelow = 1000
        let settings = configuration.nearestNeighbours
        #expect(settings.scansExactly(wanted: 18, matching: 900, catalogSize: 1500, scoreRange: false))
        #expect(!settings.scansExactly(wanted: 18, matching: 1500, catalogSize: 1500, scoreRange: false))
        #expect(settings.scansExactly(wanted: 18, matching: 1500, catalogSize: 1500, scoreRange: true))
        #expect(settings.scansExactly(wanted: 2000, matching: 5000, catalogSize: 5000, scoreRange: false))
        #expect(settings.scansExactly(wanted: 18, matching: 1001, catalogSize: 1_000_000, scoreRange: false))  // ~0.1 %: past the widest search
        #expect(NearestNeighbourSettings(mode: .exact).overridden(by: { var p = SearchParameters(); p.nearestNeighbours = .approximate; return p }()).mode == .approximate)

        let engine = try await Self.engine(store, mode: .auto)
        #expect(engine.approximate?.graphs[.color]?.count == 1500)  // over exact_below: built
        let small = try await Self.engine(try await Self.catalog(200), mode: .auto)
        #expect(small.approximate?.graphs.isEmpty == true)  // under it: no graph, every query exact
    }

    @Test("another process's inserts and removals are caught up before the graph answers: new images found, removed ones never returned")
    func staleNeverAnswers() async throws {
        let store = try await Self.catalog(2000)
        let engine = try await Self.engine(store, mode: .approximate)
        let writer = try await SQLiteCatalogStore(path: store.path)  // another handle: what another process writes
        let added = (0..<50).map { seed in
            var item = Items.item("new\(seed)", seed: 70_000 + seed, metadata: ["brand": "b3"])
            item.features = Self.vector(70_000 + seed)
            return item
        }
        try await writer.upsert(added, schema: Self.schema)
        let removed = (0..<50).map { String(format: "v%07d", $0 * 7) }
        try await writer.remove(removed)
        var moved = Items.item(String(format: "v%07d", 1001), seed: 80_001, metadata: ["brand": "b1"])
        moved.features = Self.vector(80_001)
        moved.contentHash = "moved"
        try await writer.upsert([moved], schema: Self.schema)

        for item in added.prefix(10) + [moved] {
            let response = try await engine.vectorSearch(item.features, parameters: SearchParameters())
            #expect(response.result.first?.imageName == item.imageName)
        }
        for seed in 0..<30 {
            let response = try await engine.vectorSearch(Self.vector(seed * 7), parameters: SearchParameters())
            #expect(response.result.allSatisfy { !removed.contains($0.imageName) } && response.result.count == 10)
        }
        #expect(engine.approximate?.graphs[.color]?.count == 2000)
    }

    @Test("saved vectors: an engine reopening the catalog reads them, not its rows, and answers byte for byte the same; after another process's change they are stale and never used")
    func savedVectors() async throws {
        let store = try await Self.catalog(2000)
        let first = try await Self.engine(store, mode: .approximate)
        #expect(first.lastIndexLoad?.fromSavedVectors == false && first.lastIndexLoad?.count == 2000)
        try await first.saveGraphs()
        let manifest = try #require(first.vectorFiles?.manifest())
        let version = try await store.version()
        #expect(manifest.count == 2000 && manifest.catalogVersion == version)

        let second = try await Self.engine(store, mode: .approximate)
        #expect(second.lastIndexLoad?.fromSavedVectors == true, "\(String(describing: second.lastIndexLoad))")
        for parameters in try Self.variants() {
            for seed in [3, 777, 1999, 5000] {
                let expected = try Self.bytes(try await first.vectorSearch(Self.vector(seed), parameters: parameters))
                #expect(try Self.bytes(try await second.vectorSearch(Self.vector(seed), parameters: parameters)) == expected)
            }
            let recommendation = RecommendationsRequest(imageName: "v0000042", parameters: parameters)
            #expect(try Self.bytes(try await second.recommendations(recommendation)) == Self.bytes(try await first.recommendations(recommendation)))
        }

        let writer = try await SQLiteCatalogStore(path: store.path)  // another process
        var added = Items.item("added", seed: 90_000, metadata: ["brand": "b2"])
        added.features = Self.vector(90_000)
        try await writer.upsert([added], schema: Self.schema)
        let third = try await Self.engine(store, mode: .approximate)
        #expect(third.lastIndexLoad?.fromSavedVectors == false && third.lastIndexLoad?.notUsed?.contains("version") == true,
                "\(String(describing: third.lastIndexLoad))")
        #expect(try await third.vectorSearch(added.features, parameters: SearchParameters()).result.first?.imageName == "added")
        try await third.saveGraphs()  // saved again at the new version: the next engine reads them
        #expect(try await Self.engine(store, mode: .approximate).lastIndexLoad?.fromSavedVectors == true)
    }

    @Test("another process's writes reach a running engine as changes, not a reload of every row: it answers byte for byte what a fresh engine answers")
    func changesApplied() async throws {
        let store = try await Self.catalog(2000)
        let engine = try await Self.engine(store, mode: .approximate)
        let writer = try await SQLiteCatalogStore(path: store.path)  // another process
        let added = (0..<40).map { seed in
            var item = Items.item("added\(seed)", seed: 60_000 + seed, metadata: ["brand": "b3"])
            item.features = Self.vector(60_000 + seed)
            return item
        }
        try await writer.upsert(added, schema: Self.schema)
        try await writer.remove((0..<30).map { String(format: "v%07d", $0 * 11) })
        var moved = Items.item(String(format: "v%07d", 1500), seed: 61_000, metadata: ["brand": "b0"])
        moved.features = Self.vector(61_000)
        try await writer.upsert([moved], schema: Self.schema)

        let first = try await engine.vectorSearch(added[0].features, parameters: SearchParameters())
        #expect(first.result.first?.imageName == "added0")
        let load = try #require(engine.lastIndexLoad)
        #expect(load.source == .changes && load.changed == 71 && load.count == 2010, "\(load)")
        let fresh = try await Self.engine(store, mode: .approximate)
        for var parameters in try Self.variants() {
            parameters.nearestNeighbours = .exact  // the index's rows decide, not the graphs' build order
            for query in [added[5].features, moved.features, Self.vector(11), Self.vector(4242)] {
                #expect(try Self.bytes(try await engine.vectorSearch(query, parameters: parameters))
                        == Self.bytes(try await fresh.vectorSearch(query, parameters: parameters)))
            }
        }
    }

    @Test("another catalog's saved vectors at the same version and size are caught by the rows read back, never answered from")
    func anotherCatalogsVectors() async throws {
        let original = try await Self.catalog(1500)
        try await Self.engine(original, mode: .approximate).saveGraphs()
        let other = try await Self.catalog(1500, shift: 400_000)  // the same names, ids and writes; other vectors
        #expect(try await other.version() == (try await original.version()))
        try FileManager.default.copyItem(atPath: original.graphFiles.directory, toPath: other.graphFiles.directory)
        let engine = try await Self.engine(other, mode: .approximate)
        let load = try #require(engine.lastIndexLoad)
        #expect(!load.fromSavedVectors && load.notUsed?.contains("not the one saved") == true, "\(load)")
        for seed in [5, 500, 1400] {
            let response = try await engine.vectorSearch(Self.vector(seed + 400_000), parameters: SearchParameters())
            #expect(response.result.first?.imageName == String(format: "v%07d", seed))
        }
    }

    @Test("a catalog that lost a third of its images gets its graph compacted while it answers: no holes, removed images never returned, saved")
    func compaction() async throws {
        let store = try await Self.catalog(3000)
        var configuration = VisualSearchEngine.Configuration()
        configuration.nearestNeighbours.mode = .approximate
        configuration.nearestNeighbours.efSearch = 200
        configuration.versionCheckInterval = .zero
        configuration.graphPolicy.compactionMinimum = 100
        let reports = Locked<[ApproximateIndex.Report]>([])
        configuration.graphReports = { result in if case .success(let report) = result { reports.withLock { $0.append(report) } } }
        let engine = try await OpenedCatalog(sqlite: store).engine(configuration: configuration)
        #expect(await engine.compactGraphs() == nil)  // no holes: nothing due
        let removed = (0..<1000).map { String(format: "v%07d", $0 * 3) }
        _ = try await store.remove(removed)
        _ = try await engine.vectorSearch(Self.vector(1), parameters: SearchParameters())  // the engine sees the removals
        let holed = try #require(engine.approximate?.graphs[.color])
        #expect(holed.nodes == 3000 && holed.count == 2000)

        let report = try #require(await engine.compactGraphs())
        #expect(report.spaces.map(\.space) == [.color] && report.spaces[0].compacted && report.spaces[0].removed == 1000 && report.saved)
        #expect(reports.withLock { $0.last?.spaces.first?.compacted } == true)
        let graph = try #require(engine.approximate?.graphs[.color])
        #expect(graph.nodes == 2000 && graph.count == 2000)
        #expect(try #require(store.graphFiles.manifest(.color)).count == 2000)
        for seed in stride(from: 1, to: 3000, by: 3).prefix(40) {  // kept images are found first by their own vectors
            let response = try await engine.vectorSearch(Self.vector(seed), parameters: SearchParameters())
            #expect(response.result.first?.imageName == String(format: "v%07d", seed))
            #expect(response.result.allSatisfy { !removed.contains($0.imageName) } && response.result.count == 10)
        }
        // A server stopping stops compaction: due again, nothing is rebuilt.
        engine.stopCompacting()
        _ = try await store.remove((0..<1000).map { String(format: "v%07d", $0 * 3 + 1) })
        _ = try await engine.vectorSearch(Self.vector(2), parameters: SearchParameters())
        #expect(engine.approximate?.spacesToCompact(policy: configuration.graphPolicy) == [.color])
        #expect(await engine.compactGraphs() == nil)
    }
}

private func + (a: [String: String], b: [String: String]) -> [String: String] { a.merging(b) { $1 } }
