import Foundation
import SearchEngine
import TestSupport
import Testing

/// The in-memory index saved beside the graphs: read back exactly, used only
/// for the catalog state it was saved from, never when damaged, torn or
/// half-written.
struct VectorFilesTests {
    /// An index of `count` rows with palettes, learned vectors on two rows in three, and names beyond ASCII.
    static func index(_ count: Int, learned: Bool = true) -> FeatureIndex {
        var index = FeatureIndex(dimensions: 112, learnedDimensions: learned ? 64 : 0)
        for seed in 0..<count {
            index.append(id: Int64(seed * 3 + 1), name: seed % 7 == 0 ? "kleid-\(seed)-grün" : "i\(seed)", source: "/images/\(seed).jpg",
                         vector: Items.vector(seed), learned: learned && seed % 3 != 2 ? Items.learnedVector(seed) : nil,
                         palette: seed % 5 == 4 ? DominantColors(entries: []) : Items.palette(seed))
        }
        return index
    }

    static func expectSame(_ a: FeatureIndex, _ b: FeatureIndex) {
        #expect(a.count == b.count && a.dimensions == b.dimensions && a.learnedDimensions == b.learnedDimensions)
        #expect(a.ids == b.ids && a.names == b.names && a.sources == b.sources && a.palettes == b.palettes)
        #expect(a.vectors.map(\.bitPattern) == b.vectors.map(\.bitPattern))
        #expect(a.learned?.values == b.learned?.values && a.learned?.inverseNorms.map(\.bitPattern) == b.learned?.inverseNorms.map(\.bitPattern))
        #expect(a.learnedCount == b.learnedCount)
        for row in stride(from: 0, to: a.count, by: 97) {
            #expect(b.row(named: a.names[row]) == row && b.row(id: a.ids[row]) == row)
        }
    }

    static func folder() -> VectorFiles {
        VectorFiles(directory: Repository.temporaryDirectory("vectors") + "/catalog.sqlite.hnsw")
    }

    @Test("saved and read back exactly: ids, names, sources, palettes, colour vectors bit for bit, learned Int8s and lengths, lookups")
    func roundTrip() throws {
        let files = Self.folder()
        for learned in [true, false] {
            let index = Self.index(1000, learned: learned)
            let manifest = try files.save(index, catalogVersion: 12, model: "test-model@5e5e")
            #expect(manifest.catalogVersion == 12 && manifest.count == 1000 && manifest.learnedDimensions == (learned ? 64 : 0))
            #expect(manifest.model == (learned ? "test-model@5e5e" : nil))
            guard case .index(let read, _) = files.load(version: 12, count: 1000, model: manifest.model, learnedDimensions: manifest.learnedDimensions) else {
                Issue.record("not loaded")
                continue
            }
            Self.expectSame(index, read)
        }
        // An empty catalog too.
        try files.save(FeatureIndex(dimensions: 112), catalogVersion: 0, model: nil)
        guard case .index(let empty, _) = files.load(version: 0, count: 0, model: nil, learnedDimensions: 0) else {
            Issue.record("empty index not loaded")
            return
        }
        #expect(empty.count == 0)
    }

    @Test("another state of the catalog is stale, never read: another version, another row count, another model")
    func stale() throws {
        let files = Self.folder()
        #expect({ if case .missing = files.load(version: 1, count: 0, model: nil, learnedDimensions: 0) { true } else { false } }())
        try files.save(Self.index(300), catalogVersion: 5, model: "m@1")
        for (version, count, model, dimensions, said) in [(6, 300, "m@1", 64, "version 5"), (5, 301, "m@1", 64, "300 rows"),
                                                          (5, 300, "m@2", 64, "model m@1"), (5, 300, "m@1", 128, "model")] {
            guard case .stale(let reason) = files.load(version: version, count: count, model: model, learnedDimensions: dimensions) else {
                Issue.record("version \(version), count \(count), model \(model): not stale")
                continue
            }
            #expect(reason.contains(said), "\(reason)")
        }
    }

    @Test("a damaged, truncated or missing file, or an unreadable manifest, is not used — and says why")
    func damaged() throws {
        let files = Self.folder()
        let manifest = try files.save(Self.index(800), catalogVersion: 3, model: "m@1")
        let path = files.directory + "/" + manifest.file
        let whole = try Data(contentsOf: URL(fileURLWithPath: path))
        func reason() -> String? {
            if case .unusable(let reason) = files.load(version: 3, count: 800, model: "m@1", learnedDimensions: 64) { return reason }
            return nil
        }
        for offset in [9, 80, whole.count / 2, whole.count - 3] {  // magic, header, vectors, the last source
            var flipped = whole
            flipped[offset] ^= 0x40
            try flipped.write(to: URL(fileURLWithPath: path))
            let said = try #require(reason(), "byte \(offset) flipped was not noticed")
            #expect(said.contains("checksum") || said.contains("damaged") || said.contains("not a saved index") || said.contains("add up"), "\(said)")
        }
        try whole.prefix(whole.count - 100).write(to: URL(fileURLWithPath: path))
        #expect(reason()?.contains("holds \(whole.count - 100) bytes") == true)
        try FileManager.default.removeItem(atPath: path)
        #expect(reason()?.contains("missing") == true)
        try Data("{ torn".utf8).write(to: URL(fileURLWithPath: files.directory + "/vectors.json"))
        #expect(reason()?.contains("cannot be read") == true)
        // Saved again, whole: read again.
        try files.save(Self.index(800), catalogVersion: 3, model: "m@1")
        #expect({ if case .index = files.load(version: 3, count: 800, model: "m@1", learnedDimensions: 64) { true } else { false } }())
    }

    @Test("killed mid-write: a half-written file and a torn manifest beside the whole ones change nothing; a save sweeps them once an hour old")
    func killedMidWrite() throws {
        let files = Self.folder()
        let index = Self.index(500)
        let saved = try files.save(index, catalogVersion: 9, model: "m@1")
        // What a process killed between its two writes leaves: a new file cut short, a manifest's .partial- copy.
        let whole = try Data(contentsOf: URL(fileURLWithPath: files.directory + "/" + saved.file))
        let half = files.directory + "/vectors-00000000-0000-0000-0000-000000000000.index"
        try whole.prefix(whole.count / 2).write(to: URL(fileURLWithPath: half))
        let partial = files.directory + "/vectors.json.partial-99999"
        try Data("{\"format\": 1, \"catalogVersion\": 10, \"co".utf8).write(to: URL(fileURLWithPath: partial))
        guard case .index(let read, let manifest) = files.load(version: 9, count: 500, model: "m@1", learnedDimensions: 64) else {
            Issue.record("the whole saved file was not read")
            return
        }
        #expect(manifest == saved)
        Self.expectSame(index, read)

        // A save keeps leftovers younger than an hour (another process may be between its writes), sweeps older ones.
        let next = try files.save(index, catalogVersion: 10, model: "m@1")
        #expect(FileManager.default.fileExists(atPath: half) && FileManager.default.fileExists(atPath: partial))
        #expect(!FileManager.default.fileExists(atPath: files.directory + "/" + saved.file))  // the file the old manifest named
        for path in [half, partial] {
            try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-7200)], ofItemAtPath: path)
        }
        let last = try files.save(index, catalogVersion: 11, model: "m@1")
        let left = try FileManager.default.contentsOfDirectory(atPath: files.directory).sorted()
        #expect(left == [last.file, "vectors.json"].sorted(), "\(left); the previous save was \(next.file)")
    }
}
