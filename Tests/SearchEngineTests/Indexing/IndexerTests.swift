import Foundation
import ImageOps
import SearchEngine
import ConcurrencyToolkit
import TestSupport
import Testing
import VisualSearch

@Suite("Indexer", .timeLimit(.minutes(10)))
struct IndexerTests {
    /// A folder of three corpus images (two in `food/`) and one file that is not an image.
    static func folder() throws -> String {
        let input = Repository.temporaryDirectory("index-input")
        try FileManager.default.createDirectory(atPath: input + "/food", withIntermediateDirectories: true)
        for name in ["coffee_cup.jpg", "chelsea_cat.jpg"] {
            try FileManager.default.copyItem(atPath: Repository.images + "/" + name, toPath: input + "/food/" + name)
        }
        try FileManager.default.copyItem(atPath: Repository.images + "/astronaut.jpg", toPath: input + "/astronaut.jpg")
        try Data("not an image".utf8).write(to: URL(fileURLWithPath: input + "/broken.jpg"))
        return input
    }

    /// A fresh store in memory: the indexer's own behaviour (the stores' writes are their conformance suites').
    static func store() async throws -> any CatalogStore {
        InMemoryCatalogStore()
    }

    /// Records the indexer's events.
    final class Events: Sendable {
        let list = Locked<[Indexer.Event]>([])
        var all: [Indexer.Event] { list.withLock { $0 } }
        func record(_ event: Indexer.Event) { list.withLock { $0.append(event) } }
        /// `(name, position, error)` of every image event.
        var images: [(name: String, position: Int, error: String?)] {
            all.compactMap { event in
                if case .image(let name, let position, let error, _, _) = event { return (name, position, error) }
                return nil
            }
        }
        var committed: [Int] {
            all.compactMap { event in
                if case .committed(let count) = event { return count }
                return nil
            }
        }
    }

    @Test("im_name is the path relative to the folder without extension; a bad file is reported and skipped")
    func names() async throws {
        let store = try await Self.store()
        let summary = try await Indexer(store: store).run(directory: try Self.folder())
        #expect(summary.files == 4 && summary.indexed == 3 && summary.failed == 1 && summary.unchanged == 0)
        #expect(summary.catalogCount == 3)
        #expect(summary.failures.count == 1 && summary.failures[0].contains("broken.jpg"))
        #expect(try await store.loadIndex().names.sorted() == ["astronaut", "food/chelsea_cat", "food/coffee_cup"])
    }

    @Test("each failure is reported with the image's position among the files, in its event")
    func failurePositions() async throws {
        let store = try await Self.store()
        let input = try Self.folder()
        let order = try ImageFiles.find(in: input, excluding: "/dev/null").map { ($0 as NSString).deletingPathExtension }
        let events = Events()
        var configuration = Indexer.Configuration()
        configuration.batchSize = 3  // the failure's position must count across batches
        _ = try await Indexer(store: store, configuration: configuration).run(directory: input, onEvent: events.record)

        guard case .started(total: 4)? = events.all.first else {
            Issue.record("the first event is \(String(describing: events.all.first)), not started(total: 4)")
            return
        }
        #expect(events.images.map(\.position).sorted() == [0, 1, 2, 3])
        for image in events.images {
            #expect(order[image.position] == image.name, "\(image.name) reported at position \(image.position)")
        }
        let failed = events.images.filter { $0.error != nil }
        #expect(failed.map(\.name) == ["broken"])
        #expect(failed.first?.error?.contains("broken.jpg") == true)
        #expect(events.committed.last == 3)
    }

    @Test("the shared pipeline: bytes, files and failed sources, each failure at its position, across batches")
    func ingest() async throws {
        let store = try await Self.store()
        let events = Events()
        var configuration = Indexer.Configuration()
        configuration.batchSize = 2
        let sources = [
            Indexer.Source(imageName: "cup", origin: "https://shop.example/cup.jpg", content: .bytes(Repository.bytes("coffee_cup.jpg")), metadata: [:]),
            Indexer.Source(imageName: "offline", origin: "https://shop.example/x.jpg", content: .failed("connection refused"), metadata: [:]),
            Indexer.Source(imageName: "missing", origin: "/nowhere/missing.jpg", content: .file("/nowhere/missing.jpg"), metadata: [:]),
            Indexer.Source(imageName: "cat", origin: Repository.images + "/chelsea_cat.jpg",
                           content: .file(Repository.images + "/chelsea_cat.jpg"), metadata: [:]),
            Indexer.Source(imageName: "text", origin: "notes.txt", content: .bytes(Array("hello".utf8)), metadata: [:]),
        ]
        let summary = try await Indexer(store: store, configuration: configuration)
            .ingest(sources, updatesMetadataOfUnchanged: false, onEvent: events.record)
        #expect(summary.indexed == 2 && summary.failed == 3 && summary.catalogCount == 2)
        let failed = events.images.filter { $0.error != nil }.sorted { $0.position < $1.position }
        #expect(failed.map(\.position) == [1, 2, 4])
        #expect(failed.map(\.name) == ["offline", "missing", "text"])
        #expect(failed[0].error?.contains("connection refused") == true)
        #expect(events.committed == [1, 2, 2])
        let index = try await store.loadIndex()
        #expect(index.names.sorted() == ["cat", "cup"])
        #expect(index.row(named: "cup").map { index.sources[$0] } == "https://shop.example/cup.jpg")
    }

    @Test("a second run decodes nothing unchanged and leaves the version; a changed file is indexed again")
    func unchanged() async throws {
        let store = try await Self.store()
        let input = try Self.folder()
        _ = try await Indexer(store: store).run(directory: input)
        let before = try await store.loadIndex()
        let version = try await store.version()
        let again = try await Indexer(store: store).run(directory: input)
        #expect(again.indexed == 0 && again.unchanged == 3 && again.failed == 1)
        #expect(try await store.version() == version, "a run that changed nothing must not make servers reload")
        let after = try await store.loadIndex()
        #expect(after.ids == before.ids && after.vectors == before.vectors)

        try FileManager.default.removeItem(atPath: input + "/astronaut.jpg")
        try FileManager.default.copyItem(atPath: Repository.images + "/cameraman.jpg", toPath: input + "/astronaut.jpg")
        let changed = try await Indexer(store: store).run(directory: input)
        #expect(changed.indexed == 1 && changed.unchanged == 2)
        #expect(try await store.contentHashes()["astronaut"] == StoredContentHash.fingerprint(of: Repository.bytes("cameraman.jpg")))
        let row = try #require(try await store.loadIndex().row(named: "astronaut"))
        let oldRow = try #require(before.row(named: "astronaut"))
        #expect(try await store.loadIndex().vector(at: row) != before.vector(at: oldRow))
    }

    @Test("rows whose vectors an older features version computed (a bare content hash) are computed again by the next run")
    func olderFeatures() async throws {
        let store = try await Self.store()
        let input = try Self.folder()
        _ = try await Indexer(store: store).run(directory: input)
        let index = try await store.loadIndex()
        let row = try #require(index.row(named: "astronaut"))
        let bytes = try FileIO.read(input + "/astronaut.jpg")
        // What vsearch before features version 2 stored: the bare hash and another vector.
        var stale = [Float](repeating: 0, count: ColorFeatures.dimensions)
        stale[0] = 1
        try await store.upsert([CatalogItem(imageName: "astronaut", source: index.sources[row], width: 1, height: 1,
                                            contentHash: ContentHash.of(bytes), features: stale, palette: index.palettes[row],
                                            metadata: [:])], schema: FieldSchema())
        #expect(try await store.staleFeatureCount() == 1)
        let again = try await Indexer(store: store).run(directory: input)
        #expect(again.indexed == 1 && again.unchanged == 2)
        #expect(try await store.staleFeatureCount() == 0)
        #expect(try await store.contentHashes()["astronaut"] == StoredContentHash.fingerprint(of: bytes))
        let after = try await store.loadIndex()
        #expect(after.vector(at: try #require(after.row(named: "astronaut"))) == index.vector(at: row))
    }

    @Test("metadata joins by im_name with inferred types; a value that does not fit its type fails that image only")
    func metadata() async throws {
        let store = try await Self.store()
        let table = try MetadataTable(csv: "im_name,price,brand\nastronaut,12.5,nasa\nfood/coffee_cup,cheap,cafe\nfood/chelsea_cat,3,cat\n")
        let summary = try await Indexer(store: store).run(directory: try Self.folder(), metadata: table, schema: FieldSchema(fields: ["price": .float]))
        #expect(summary.indexed == 2 && summary.failed == 2)
        #expect(summary.failures.contains { $0.contains("food/coffee_cup") && $0.contains("price") })
        #expect(try await store.schema().fields == ["price": .float, "brand": .string])
        #expect(try await store.loadIndex().names.sorted() == ["astronaut", "food/chelsea_cat"])
        let index = try await store.loadIndex()
        let matched = try #require(try await store.matchingIDs([Filter(field: "price", value: "10,20")], schema: store.schema()))
        #expect(matched.compactMap { index.row(id: $0).map { index.names[$0] } } == ["astronaut"])
    }

    @Test("a second run with new metadata updates only the metadata of unchanged images")
    func metadataOnlyUpdate() async throws {
        let store = try await Self.store()
        let input = try Self.folder()
        _ = try await Indexer(store: store).run(directory: input, metadata: try MetadataTable(csv: "im_name,brand\nastronaut,nasa\nfood/coffee_cup,cafe\n"))
        let before = try await store.loadIndex()
        let version = try await store.version()

        let summary = try await Indexer(store: store).run(directory: input, metadata: try MetadataTable(csv: "im_name,brand\nastronaut,esa\n"))
        #expect(summary.indexed == 0 && summary.unchanged == 3)
        let after = try await store.loadIndex()
        #expect(after.ids == before.ids && after.vectors == before.vectors)
        #expect(try await store.version() != version)
        let ids = try #require(after.row(named: "astronaut").map { after.ids[$0] })
        let cup = try #require(after.row(named: "food/coffee_cup").map { after.ids[$0] })
        let maps = try await store.valueMaps(for: [ids, cup], fields: nil)
        #expect(maps[ids] == ["brand": "esa"])
        #expect(maps[cup, default: [:]].isEmpty)  // its row is gone from the new table: its metadata goes too
    }

    @Test("metadata rows that match no image are reported, in file order, and not indexed")
    func unmatchedMetadata() async throws {
        let store = try await Self.store()
        let table = try MetadataTable(csv: "im_name,brand\nghost,x\nastronaut,nasa\nfood/ghost_cup,y\ncoffee_cup,z\n")
        let summary = try await Indexer(store: store).run(directory: try Self.folder(), metadata: table)
        #expect(summary.unmatchedMetadata == ["ghost", "food/ghost_cup", "coffee_cup"])
        #expect(summary.catalogCount == 3)
        let plain = try await Indexer(store: store).run(directory: try Self.folder())
        #expect(plain.unmatchedMetadata.isEmpty)
    }

    @Test("sources are stored as absolute, normalised paths")
    func absoluteSources() async throws {
        let store = try await Self.store()
        let input = try Self.folder()
        _ = try await Indexer(store: store).run(directory: input + "/food/../.")
        let index = try await store.loadIndex()
        let root = (input as NSString).standardizingPath
        #expect(Set(index.sources) == [root + "/astronaut.jpg", root + "/food/chelsea_cat.jpg", root + "/food/coffee_cup.jpg"])
        #expect(index.sources.allSatisfy { $0.hasPrefix("/") && !$0.contains("/./") && !$0.contains("/../") })
    }

    @Test("a schema override that contradicts the type of a field images have values for is refused")
    func conflictingOverride() async throws {
        let store = try await Self.store()
        let input = try Self.folder()
        let table = try MetadataTable(csv: "im_name,price\nastronaut,12.5\nfood/chelsea_cat,3\n")
        _ = try await Indexer(store: store).run(directory: input, metadata: table, schema: FieldSchema(fields: ["price": .float]))
        await #expect {
            try await Indexer(store: store).run(directory: input, metadata: table, schema: FieldSchema(fields: ["price": .string]))
        } throws: { error in
            guard case VisualSearchError.invalidParameter(let name, let reason) = error else { return false }
            return name == "schema" && reason.contains("price") && reason.contains("2 images have a value")
        }
    }

    @Test("a --schema field that is neither a metadata column nor declared is refused, listing the known fields; nothing is declared")
    func unknownOverride() async throws {
        let store = try await Self.store()
        let table = try MetadataTable(csv: "im_name,price\nastronaut,12.5\n")
        await #expect {
            try await Indexer(store: store).run(directory: try Self.folder(), metadata: table, schema: FieldSchema(fields: ["prcie": .int]))
        } throws: { error in
            guard case VisualSearchError.unknownField(let field, let known) = error else { return false }
            return field == "prcie" && known == ["price"]
        }
        #expect(try await store.schema().fields.isEmpty)
    }

    @Test("a type that none of a field's values fits is refused before anything is declared or indexed, naming the type that fits")
    func typeNoValueFits() async throws {
        let store = try await Self.store()
        let table = try MetadataTable(csv: "im_name,price\nastronaut,12.5\nfood/chelsea_cat,3.25\n")
        await #expect {
            try await Indexer(store: store).run(directory: try Self.folder(), metadata: table, schema: FieldSchema(fields: ["price": .int]))
        } throws: { error in
            guard case VisualSearchError.invalidParameter(_, let reason) = error else { return false }
            return reason.contains("`Indexer.run(schema:)` price:float")
        }
        #expect(try await store.schema().fields.isEmpty)
        #expect(try await store.count() == 0)
    }

    @Test("a cancelled run keeps every committed batch, and a re-run finishes the job")
    func cancelAndResume() async throws {
        let store = try await Self.store()
        let input = try Self.folder()
        var configuration = Indexer.Configuration()
        configuration.batchSize = 1
        let events = Events()
        let first = try await Indexer(store: store, configuration: configuration).run(
            directory: input, isCancelled: { !events.committed.isEmpty }, onEvent: events.record)
        #expect(try await store.count() == first.catalogCount)
        #expect(try await store.count() < 3)
        let second = try await Indexer(store: store, configuration: configuration).run(directory: input)
        #expect(second.catalogCount == 3)
        #expect(second.unchanged + second.indexed == 3)
    }
}
