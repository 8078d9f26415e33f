import Foundation
import SQLiteCatalog
import SearchEngine
import TestSupport
import Testing
import VisualSearch
import VisualSearchServer
import CatalogStores

@Suite("Engine upkeep", .timeLimit(.minutes(10)))
struct EngineUpkeepTests {
    /// A non-negative unit vector of 112 floats, different for each seed.
    static func vector(_ seed: Int) -> [Float] {
        var state = UInt64(seed) &* 0x9E37_79B9_7F4A_7C15 &+ 1
        var values: [Float] = (0..<112).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Float(state >> 40) / Float(1 << 24)
        }
        let norm = values.reduce(0) { $0 + $1 * $1 }.squareRoot()
        for i in values.indices { values[i] /= norm }
        return values
    }

    @Test("the server's engine upkeep compacts a graph that lost a third of its rows, in the background; and stops with its task")
    func compactsInBackground() async throws {
        let store = try await SQLiteCatalogStore(path: Repository.temporaryDirectory("compaction") + "/catalog.sqlite", creating: true)
        let schema = FieldSchema(fields: [:])
        try await store.declare(schema)
        let items = (0..<3000).map { seed in
            CatalogItem(imageName: String(format: "v%07d", seed), source: "/images/\(seed).jpg", width: 100, height: 100,
                        contentHash: "hash-\(seed)", features: Self.vector(seed), palette: DominantColors(entries: []), metadata: [:])
        }
        for start in stride(from: 0, to: items.count, by: 500) { try await store.upsert(Array(items[start..<(start + 500)]), schema: schema) }
        let (reports, reported) = AsyncStream.makeStream(of: ApproximateIndex.Report.self)
        var configuration = VisualSearchEngine.Configuration()
        configuration.nearestNeighbours.mode = .approximate
        configuration.versionCheckInterval = .zero
        configuration.graphPolicy.compactionMinimum = 100
        configuration.graphReports = { result in
            if case .success(let report) = result, report.spaces.contains(where: \.compacted) { reported.yield(report) }
        }
        let engine = try await OpenedCatalog(sqlite: store).engine(configuration: configuration)
        _ = try await store.remove((0..<1000).map { String(format: "v%07d", $0 * 3) })
        _ = try await engine.vectorSearch(Self.vector(1), parameters: SearchParameters())  // the engine sees the removals
        #expect(engine.approximate?.graphs[.color].map { $0.nodes - $0.count } == 1000)

        let upkeep = Task { await EngineUpkeep(engine: engine, compactionInterval: .milliseconds(10)).run() }
        var iterator = reports.makeAsyncIterator()
        let report = try #require(await iterator.next())
        #expect(report.spaces.first { $0.space == .color }?.removed == 1000)
        let graph = try #require(engine.approximate?.graphs[.color])
        #expect(graph.nodes == 2000 && graph.count == 2000)
        upkeep.cancel()
        await upkeep.value  // the loop ends with its task, after saving
        #expect(engine.approximate?.files?.manifest(.color)?.count == 2000, "the compacted graph is the one on disk")
    }

    @Test("as it stops, the engine upkeep saves the graphs caught up in memory since the last save, compaction or not")
    func savesOnStop() async throws {
        let store = try await SQLiteCatalogStore(path: Repository.temporaryDirectory("upkeep-save") + "/catalog.sqlite", creating: true)
        let schema = FieldSchema(fields: [:])
        try await store.declare(schema)
        func items(_ seeds: Range<Int>) -> [CatalogItem] {
            seeds.map { seed in
                CatalogItem(imageName: String(format: "v%07d", seed), source: "/images/\(seed).jpg", width: 100, height: 100,
                            contentHash: "hash-\(seed)", features: Self.vector(seed), palette: DominantColors(entries: []), metadata: [:])
            }
        }
        try await store.upsert(items(0..<1200), schema: schema)
        var configuration = VisualSearchEngine.Configuration()
        configuration.nearestNeighbours.mode = .approximate
        configuration.versionCheckInterval = .zero
        configuration.graphPolicy.saveInterval = .seconds(86_400)  // a catch-up is not saved on its own within the test
        let engine = try await OpenedCatalog(sqlite: store).engine(configuration: configuration)
        _ = try await engine.vectorSearch(Self.vector(1), parameters: SearchParameters())
        #expect(engine.approximate?.files?.manifest(.color)?.count == 1200, "a graph built is saved at once")
        try await store.upsert(items(1200..<1500), schema: schema)  // another writer: the engine catches up on its next search
        _ = try await engine.vectorSearch(Self.vector(2), parameters: SearchParameters())
        #expect(engine.approximate?.graphs[.color]?.count == 1500)
        #expect(engine.approximate?.files?.manifest(.color)?.count == 1200, "the catch-up waits for the save interval")

        let upkeep = Task { await EngineUpkeep(engine: engine, compactionInterval: nil).run() }
        upkeep.cancel()
        await upkeep.value
        #expect(engine.approximate?.files?.manifest(.color)?.count == 1500, "saved as the upkeep stopped")
    }
}
