import Foundation
import SearchEngine
import SQLiteCatalog
import TestSupport
import Testing
import VisualSearch

/// ``SQLiteCatalogStore/changes(since:)``: every write logs the images it
/// changed, and an index caught up by them (``FeatureIndex/applying(_:)``)
/// is row for row the index a fresh load makes.
@Suite("SQLiteCatalogStore.changes", .timeLimit(.minutes(10)))
struct SQLiteChangesTests {
    static let schema = FieldSchema(fields: ["brand": .string])

    static func store() async throws -> SQLiteCatalogStore {
        let store = try await SQLiteCatalogStore(path: Repository.temporaryDirectory("changes") + "/catalog.sqlite", creating: true)
        try await store.declare(schema)
        try await store.recordLearnedModel(Items.learnedModel())
        return store
    }

    static func item(_ name: String, seed: Int) -> CatalogItem {
        var item = Items.item(name, seed: seed, metadata: ["brand": "b\(seed % 3)"])
        item.learned = seed % 4 == 0 ? nil : Items.learnedVector(seed)
        return item
    }

    static func expectSame(_ a: FeatureIndex, _ b: FeatureIndex, _ comment: Comment? = nil) {
        #expect(a.ids == b.ids && a.names == b.names && a.sources == b.sources && a.palettes == b.palettes, comment)
        #expect(a.vectors.map(\.bitPattern) == b.vectors.map(\.bitPattern), comment)
        #expect(a.learned?.values == b.learned?.values && a.learned?.inverseNorms == b.learned?.inverseNorms
                && a.learnedCount == b.learnedCount, comment)
        #expect(a.ids.indices.allSatisfy { b.row(id: a.ids[$0]) == $0 && b.row(named: a.names[$0]) == $0 }, comment)
    }

    @Test("each write logs what it changed: added and replaced images come back as rows, removed ones as ids; metadata-only writes change no row")
    func logged() async throws {
        let store = try await Self.store()
        try await store.upsert((0..<20).map { Self.item("i\($0)", seed: $0) }, schema: Self.schema)
        let start = try await store.version()
        #expect(try await store.changes(since: start).map { $0.count == 0 && $0.version == start } == true)

        try await store.upsert([Self.item("i3", seed: 300), Self.item("new", seed: 99)], schema: Self.schema)
        try await store.remove(["i5", "i6", "absent"])
        try await store.updateMetadata([MetadataUpdate(imageName: "i7", metadata: ["brand": "b9"])], schema: Self.schema)
        let changes = try #require(try await store.changes(since: start))
        let version = try await store.version()
        #expect(changes.version == version && changes.version == start + 3)
        #expect(Set(changes.rows.names) == ["i3", "new"] && changes.removed.count == 2)
        let fresh = try await store.loadIndex()
        #expect(!fresh.ids.contains { changes.removed.contains($0) })
        let row = try #require(changes.rows.row(named: "i3"))
        #expect(changes.rows.vectors[(row * 112)..<(row * 112 + 112)].elementsEqual(Items.vector(300)))
        // Since a later version: only what came after.
        let later = try #require(try await store.changes(since: start + 1))
        #expect(later.rows.count == 0 && later.removed.count == 2)
    }

    @Test("an index caught up by the changes is row for row a fresh load, through random adds, replacements and removals")
    func applyingEqualsFreshLoad() async throws {
        let store = try await Self.store()
        try await store.upsert((0..<300).map { Self.item(String(format: "i%04d", $0), seed: $0) }, schema: Self.schema)
        var index = try await store.loadIndex()
        var version = try await store.version()
        var random = TestSeed("SQLiteChangesTests.applyingEqualsFreshLoad")
        var next = 1000
        for round in 0..<25 {
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                switch Int.random(in: 0..<3, using: &random) {
                case 0:  // new images
                    try await store.upsert((0..<Int.random(in: 1...20, using: &random)).map { _ in
                        next += 1
                        return Self.item("n\(next)", seed: next)
                    }, schema: Self.schema)
                case 1:  // replaced vectors of present images
                    let names = (0..<Int.random(in: 1...10, using: &random)).compactMap { _ in index.names.randomElement(using: &random) }
                    try await store.upsert(Set(names).map { name in
                        next += 1
                        return Self.item(name, seed: next)
                    }, schema: Self.schema)
                default:  // removed, now and then the newest (whose id the next insert takes again)
                    var names = (0..<Int.random(in: 1...10, using: &random)).compactMap { _ in index.names.randomElement(using: &random) }
                    if round % 5 == 0, let last = try await store.loadIndex().names.last { names.append(last) }
                    try await store.remove(Array(Set(names)))
                }
            }
            let changes = try #require(try await store.changes(since: version))
            index = index.applying(changes)
            version = changes.version
            Self.expectSame(index, try await store.loadIndex(), "round \(round)")
        }
    }

    @Test("no changes to tell: a version the log does not reach, a version ahead of the catalog, a new model, a backup's copy")
    func cannotSay() async throws {
        let store = try await Self.store()
        try await store.upsert([Self.item("a", seed: 1)], schema: Self.schema)
        let version = try await store.version()
        #expect(try await store.changes(since: version + 5) == nil)  // ahead: another catalog file, a restored copy
        try await store.recordLearnedModel(Items.learnedModel(dimension: 64, hash: String(repeating: "7a", count: 32)))
        #expect(try await store.changes(since: version) == nil)  // every learned vector reads differently now
        let now = try await store.version()
        try await store.upsert([Self.item("b", seed: 2)], schema: Self.schema)
        #expect(try await store.changes(since: now)?.rows.names == ["b"])

        let copy = Repository.temporaryDirectory("changes-backup") + "/copy.sqlite"
        _ = try await store.backup(to: copy, replacing: false) { _ in }
        let restored = try await SQLiteCatalogStore(path: copy)
        #expect(try await restored.changes(since: now) == nil)
        #expect(try await restored.changes(since: try await restored.version())?.count == 0)
    }
}
