import Foundation
import ConcurrencyToolkit
import SearchEngine
import TestSupport
import Testing

/// The graphs kept in step with the catalog: built, saved with their
/// version, loaded and compared row by row, caught up, rebuilt when damaged.
@Suite(.timeLimit(.minutes(10)))
struct ApproximateIndexTests {
    static let policy = ApproximateIndex.Policy(builds: true, saves: true)

    /// An index of the rows `seeds` (id = seed, vector = Items.vector(seed + shift)); learned vectors when `learned`.
    static func index(_ seeds: [Int], shift: [Int: Int] = [:], learned: Bool = false) -> FeatureIndex {
        var index = FeatureIndex(dimensions: 112, learnedDimensions: learned ? 64 : 0)
        for seed in seeds {
            index.append(id: Int64(seed), name: "i\(seed)", source: "", vector: Items.vector(seed + (shift[seed] ?? 0)),
                         learned: learned ? Items.learnedVector(seed) : nil, palette: DominantColors(entries: []))
        }
        return index
    }

    static func space(_ report: ApproximateIndex.Report, _ space: VectorSpace) throws -> ApproximateIndex.Report.Space {
        try #require(report.spaces.first { $0.space == space })
    }

    @Test("built and saved with the version it reflects; opened again it is loaded, compared, and nothing is added")
    func buildThenLoad() async throws {
        let files = GraphFiles(directory: Repository.temporaryDirectory("graphs") + "/catalog.sqlite.hnsw")
        let index = Self.index(Array(0..<1500))
        let first = try await ApproximateIndex(files: files).update(to: index, version: 7, model: nil, policy: Self.policy)
        let built = try Self.space(first, .color)
        #expect(built.built && !built.loaded && built.added == 1500 && built.count == 1500 && first.saved)
        let manifest = try #require(files.manifest(.color))
        #expect(manifest.catalogVersion == 7 && manifest.count == 1500 && manifest.dimensions == 112 && manifest.bytes > 0)

        let again = ApproximateIndex(files: files)
        let second = try Self.space(try await again.update(to: index, version: 7, model: nil, policy: Self.policy), .color)
        #expect(second.loaded && !second.built && second.added + second.replaced + second.removed == 0 && second.count == 1500)
        #expect(again.version == 7)
    }

    @Test("a saved graph behind the catalog is caught up before it answers: new rows added, changed ones replaced, gone ones removed")
    func catchUp() async throws {
        let files = GraphFiles(directory: Repository.temporaryDirectory("graphs") + "/c.hnsw")
        _ = try await ApproximateIndex(files: files).update(to: Self.index(Array(0..<1200)), version: 3, model: nil, policy: Self.policy)
        // Behind the graph's back: rows 0..<100 removed, 1200..<1300 added, 500..<520 given other vectors.
        let moved = Self.index(Array(100..<1300), shift: Dictionary(uniqueKeysWithValues: (500..<520).map { ($0, 50_000) }))
        let later = ApproximateIndex(files: files)
        let caught = try Self.space(try await later.update(to: moved, version: 9, model: nil, policy: Self.policy), .color)
        #expect(caught.loaded && caught.added == 100 && caught.replaced == 20 && caught.removed == 100 && caught.count == 1200)
        let graph = try #require(later.graphs[.color])
        #expect(Set(graph.labels()) == Set((100..<1300).map(Int64.init)))
        for seed in 500..<520 {  // each changed row is found by its new vector
            let rows = later.candidates(for: Items.vector(seed + 50_000), space: .color, wanted: 1, ef: 50, index: moved, allowed: nil, excluding: nil)
            #expect(rows?.first == moved.row(id: Int64(seed)))
        }
    }

    @Test("a damaged or torn graph file is not used: rebuilt (saying why), or — when this engine may not build — no graph at all")
    func damaged() async throws {
        let directory = Repository.temporaryDirectory("graphs") + "/c.hnsw"
        let files = GraphFiles(directory: directory)
        let index = Self.index(Array(0..<1100))
        _ = try await ApproximateIndex(files: files).update(to: index, version: 1, model: nil, policy: Self.policy)
        let path = directory + "/" + (try #require(files.manifest(.color))).file
        var data = try Data(contentsOf: URL(fileURLWithPath: path))
        data[data.count - 5000] ^= 0xFF
        try data.write(to: URL(fileURLWithPath: path))

        let readOnly = try await ApproximateIndex(files: files).update(to: index, version: 1, model: nil,
                                                                       policy: ApproximateIndex.Policy(builds: false, saves: false))
        #expect(readOnly.spaces.count == 1 && readOnly.spaces[0].unusable?.contains("checksum") == true && !readOnly.spaces[0].built)
        let rebuilt = try Self.space(try await ApproximateIndex(files: files).update(to: index, version: 1, model: nil, policy: Self.policy), .color)
        #expect(rebuilt.built && rebuilt.unusable?.contains("checksum") == true && rebuilt.count == 1100)
        // Saved again whole: the next open loads it.
        let next = try Self.space(try await ApproximateIndex(files: files).update(to: index, version: 1, model: nil, policy: Self.policy), .color)
        #expect(next.loaded)

        try Data("{ not json".utf8).write(to: URL(fileURLWithPath: directory + "/color.json"))
        let afterGarbage = try Self.space(try await ApproximateIndex(files: files).update(to: index, version: 1, model: nil, policy: Self.policy), .color)
        #expect(afterGarbage.built && afterGarbage.unusable?.contains("cannot be read") == true)
    }

    @Test("a catalog with learned vectors gets a learned graph too; another model's saved graph is not used")
    func learnedSpace() async throws {
        let files = GraphFiles(directory: Repository.temporaryDirectory("graphs") + "/c.hnsw")
        let index = Self.index(Array(0..<1100), learned: true)
        let report = try await ApproximateIndex(files: files).update(to: index, version: 2, model: "test-model@5e5e", policy: Self.policy)
        #expect(try Self.space(report, .learned).count == 1100 && files.manifest(.learned)?.model == "test-model@5e5e")
        // Opened again with the same model: loaded and compared (as Int8 rows, byte for byte), nothing rebuilt or caught up.
        let same = try Self.space(try await ApproximateIndex(files: files).update(to: index, version: 2, model: "test-model@5e5e", policy: Self.policy), .learned)
        #expect(same.loaded && !same.built && same.unusable == nil && same.added + same.replaced + same.removed == 0, "\(same)")
        let other = try await ApproximateIndex(files: files).update(to: index, version: 2, model: "other@0000", policy: Self.policy)
        let learned = try Self.space(other, .learned)
        #expect(learned.built && learned.unusable?.contains("model") == true)
        #expect(try Self.space(other, .color).loaded)
    }

    @Test("a filter's rows: a search widens until it has the rows wanted that pass, or says it cannot (nil)")
    func widening() async throws {
        let index = Self.index(Array(0..<3000))
        let approximate = ApproximateIndex(files: nil)
        _ = try await approximate.update(to: index, version: 1, model: nil, policy: ApproximateIndex.Policy(builds: true, saves: false))
        let tenth = RowSet(Array(stride(from: 3, to: 3000, by: 10)), capacity: 3000)
        let rows = try #require(approximate.candidates(for: Items.vector(77_777), space: .color, wanted: 18, ef: 40, index: index,
                                                       allowed: tenth, excluding: nil))
        #expect(rows.count >= 18 && rows.allSatisfy { $0 % 10 == 3 })
        let three = RowSet([5, 500, 2500], capacity: 3000)
        #expect(approximate.candidates(for: Items.vector(1), space: .color, wanted: 18, ef: 40, index: index, allowed: three, excluding: nil)
                .map { Set($0) } == Set([5, 500, 2500]))  // the widest search walked the whole graph: all three, none left out
        let excluded = approximate.candidates(for: Items.vector(42), space: .color, wanted: 5, ef: 20, index: index, allowed: nil, excluding: 42)
        #expect(excluded?.contains(42) == false && (excluded?.count ?? 0) >= 5)
    }

    @Test("removed rows beyond a tenth of a graph's nodes are compacted away: rebuilt from the index it reflects, every row found, saved")
    func compaction() async throws {
        let files = GraphFiles(directory: Repository.temporaryDirectory("graphs") + "/c.hnsw")
        let approximate = ApproximateIndex(files: files)
        _ = try await approximate.update(to: Self.index(Array(0..<2000)), version: 1, model: nil, policy: Self.policy)
        let kept = Self.index(Array(600..<2000))
        _ = try await approximate.update(to: kept, version: 2, model: nil, policy: Self.policy)
        let holed = try #require(approximate.graphs[.color])
        #expect(holed.nodes == 2000 && holed.count == 1400)
        var policy = Self.policy
        policy.compactionMinimum = 100
        var few = policy
        few.compactionMinimum = 700  // 600 holes: below this minimum, nothing is due
        #expect(approximate.spacesToCompact(policy: few).isEmpty && approximate.spacesToCompact(policy: policy) == [.color])

        let report = try await approximate.compact(policy: policy)
        let space = try Self.space(report, .color)
        #expect(space.compacted && space.removed == 600 && space.count == 1400 && space.added + space.replaced == 0 && report.saved)
        let graph = try #require(approximate.graphs[.color])
        #expect(graph !== holed && graph.nodes == 1400 && graph.count == 1400)
        #expect(Set(graph.labels()) == Set((600..<2000).map(Int64.init)))
        for seed in stride(from: 600, to: 2000, by: 70) {
            let rows = approximate.candidates(for: Items.vector(seed), space: .color, wanted: 1, ef: 50, index: kept, allowed: nil, excluding: nil)
            #expect(rows?.first == kept.row(id: Int64(seed)))
        }
        #expect(try #require(files.manifest(.color)).count == 1400)
        #expect(try await approximate.compact(policy: policy).spaces.isEmpty)  // nothing due any more
    }

    @Test("a change the catalog makes while a graph is being compacted is in the new graph before it answers")
    func compactionCatchesUp() async throws {
        let later = Self.index(Array(1100..<3100), shift: Dictionary(uniqueKeysWithValues: (2000..<2020).map { ($0, 50_000) }))
        let approximate = ApproximateIndex(files: nil)
        _ = try await approximate.update(to: Self.index(Array(0..<3000)), version: 1, model: nil, policy: Self.policy)
        _ = try await approximate.update(to: Self.index(Array(1000..<3000)), version: 2, model: nil, policy: Self.policy)
        // The rebuild (on its own thread) stops at its first progress report until the test has changed the catalog.
        let (building, started) = AsyncStream.makeStream(of: Void.self)
        let changed = DispatchSemaphore(value: 0)
        let first = Locked(true)
        var policy = Self.policy
        policy.compactionMinimum = 100
        policy.progress = { _, _, _ in
            if first.withLock({ let was = $0; $0 = false; return was }) {
                started.yield()
                _ = changed.wait(timeout: .now() + 600)
            }
            return true
        }
        let compacted = Task { try await approximate.compact(policy: policy) }
        do {
            defer { changed.signal() }  // whatever happens below, the rebuild goes on
            var iterator = building.makeAsyncIterator()
            await iterator.next()
            // Meanwhile: 100 rows added, 100 more removed, 20 given other vectors.
            _ = try await approximate.update(to: later, version: 3, model: nil, policy: Self.policy)
        }
        let space = try Self.space(try await compacted.value, .color)
        #expect(space.compacted && space.added == 100 && space.replaced == 20 && space.count == 2000)
        let graph = try #require(approximate.graphs[.color])
        #expect(Set(graph.labels()) == Set((1100..<3100).map(Int64.init)) && graph.nodes - graph.count <= 100)
        for seed in 2000..<2020 {
            let rows = approximate.candidates(for: Items.vector(seed + 50_000), space: .color, wanted: 1, ef: 50, index: later, allowed: nil, excluding: nil)
            #expect(rows?.first == later.row(id: Int64(seed)))
        }
        #expect(approximate.version == 3)
    }
}
