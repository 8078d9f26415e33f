import Foundation
import ImageOps
import Testing
@testable import VisualSearch

@Suite("Catalog storage")
struct CatalogTests {
    @Test("a new catalog is created with its folder, marked as vsearch's, and reopens")
    func createAndReopen() throws {
        let path = Corpus.temporaryDirectory() + "/nested/dir/catalog.sqlite"
        let catalog = try Catalog(path: path)
        #expect(try catalog.count() == 0)
        #expect(try catalog.integrityCheck() == "ok")
        _ = try Catalog(path: path)
    }

    @Test("a foreign SQLite file is refused, not altered")
    func foreign() throws {
        let path = Corpus.temporaryDirectory() + "/other.sqlite"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", "import sqlite3; c=sqlite3.connect('\(path)'); c.execute('create table t(x)'); c.commit()"]
        try process.run()
        process.waitUntilExit()
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(throws: VisualSearchError.self) { try Catalog(path: path) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    @Test("a corrupt file is a catalog error naming the path, not a crash")
    func corrupt() throws {
        let path = Corpus.temporaryDirectory() + "/corrupt.sqlite"
        try Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 2654435761 >> 7) }).write(to: URL(fileURLWithPath: path))
        do {
            _ = try Catalog(path: path)
            Issue.record("opened a corrupt file")
        } catch {
            #expect(error.description.contains(path))
        }
    }

    @Test("schema: declaring a field again with another type is an error")
    func schemaConflict() throws {
        let catalog = try Catalog(path: Corpus.temporaryDirectory() + "/c.sqlite")
        try catalog.declare(FieldSchema(fields: ["price": .float]))
        try catalog.declare(FieldSchema(fields: ["price": .float, "brand": .string]))
        #expect(try catalog.schema().fields == ["price": .float, "brand": .string])
        #expect(throws: VisualSearchError.self) { try catalog.declare(FieldSchema(fields: ["price": .string])) }
    }

    @Test("upsert replaces by im_name; remove deletes; the version moves with every change")
    func upsertAndRemove() throws {
        let catalog = try Catalog(path: Corpus.temporaryDirectory() + "/c.sqlite")
        let schema = FieldSchema(fields: ["brand": .string])
        try catalog.declare(schema)
        let vector = [Float](repeating: 0, count: ColorFeatures.dimensions)
        func item(_ name: String, _ brand: String) -> CatalogItem {
            CatalogItem(imageName: name, source: "/x/\(name).jpg", width: 1, height: 1, contentHash: brand,
                        features: vector, palette: DominantColors(entries: []), metadata: ["brand": brand])
        }
        let v0 = try catalog.version()
        try catalog.upsert([item("a", "x"), item("b", "y")], schema: schema)
        try catalog.upsert([item("a", "z")], schema: schema)
        #expect(try catalog.count() == 2)
        #expect(try catalog.version() > v0)
        let rows = try catalog.export()
        #expect(rows.first { $0.name == "a" }?.metadata["brand"] == "z")
        #expect(try catalog.remove(["a", "missing"]) == 1)
        #expect(try catalog.count() == 1)
        #expect(try catalog.loadIndex().names == ["b"])
    }

    @Test("an engine sees images another catalog connection adds (index reload on version change)")
    func reload() throws {
        let path = Corpus.temporaryDirectory() + "/c.sqlite"
        let engine = try VisualSearchEngine(catalog: Catalog(path: path))
        #expect(throws: VisualSearchError.imageNotFound("astronaut")) { try engine.search(imageName: "astronaut", parameters: SearchParameters()) }
        let other = try Catalog(path: path)
        let input = Corpus.temporaryDirectory()
        try FileManager.default.copyItem(atPath: Corpus.images + "/astronaut.jpg", toPath: input + "/astronaut.jpg")
        _ = try Indexer(catalog: other).run(directory: input)
        #expect(try engine.search(imageName: "astronaut", parameters: SearchParameters()).total == 1)
    }
}

@Suite("Indexer")
struct IndexerTests {
    static func folder() throws -> String {
        let input = Corpus.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: input + "/food", withIntermediateDirectories: true)
        for name in ["coffee_cup.jpg", "chelsea_cat.jpg"] {
            try FileManager.default.copyItem(atPath: Corpus.images + "/" + name, toPath: input + "/food/" + name)
        }
        try FileManager.default.copyItem(atPath: Corpus.images + "/astronaut.jpg", toPath: input + "/astronaut.jpg")
        try Data("not an image".utf8).write(to: URL(fileURLWithPath: input + "/broken.jpg"))
        return input
    }

    @Test("im_name is the relative path without extension; bad images are reported and skipped")
    func names() throws {
        let catalog = try Catalog(path: Corpus.temporaryDirectory() + "/c.sqlite")
        let summary = try Indexer(catalog: catalog).run(directory: try Self.folder())
        #expect(summary.indexed == 3 && summary.failed == 1)
        #expect(summary.failures.first?.contains("broken.jpg") == true)
        #expect(Set(try catalog.loadIndex().names) == ["astronaut", "food/coffee_cup", "food/chelsea_cat"])
    }

    @Test("a second run decodes nothing unchanged; a changed file is indexed again")
    func unchanged() throws {
        let catalog = try Catalog(path: Corpus.temporaryDirectory() + "/c.sqlite")
        let input = try Self.folder()
        _ = try Indexer(catalog: catalog).run(directory: input)
        let again = try Indexer(catalog: catalog).run(directory: input)
        #expect(again.indexed == 0 && again.unchanged == 3)
        try FileManager.default.removeItem(atPath: input + "/astronaut.jpg")
        try FileManager.default.copyItem(atPath: Corpus.images + "/cameraman.jpg", toPath: input + "/astronaut.jpg")
        let changed = try Indexer(catalog: catalog).run(directory: input)
        #expect(changed.indexed == 1 && changed.unchanged == 2)
    }

    @Test("metadata joins by im_name; a value that does not fit its type fails that row only")
    func metadata() throws {
        let catalog = try Catalog(path: Corpus.temporaryDirectory() + "/c.sqlite")
        let table = try MetadataTable(csv: "im_name,price,brand\nastronaut,12.5,nasa\nfood/coffee_cup,cheap,cafe\nfood/chelsea_cat,3,cat\n")
        let summary = try Indexer(catalog: catalog).run(directory: try Self.folder(), metadata: table, schema: FieldSchema(fields: ["price": .float]))
        #expect(summary.failures.contains { $0.contains("food/coffee_cup") && $0.contains("price") })
        #expect(try catalog.schema().fields == ["price": .float, "brand": .string])
        let engine = try VisualSearchEngine(catalog: catalog)
        var parameters = SearchParameters()
        parameters.filters = [Filter(field: "price", value: "10,20")]
        #expect(try engine.search(imageName: "astronaut", parameters: parameters).result.map(\.imageName) == ["astronaut"])
    }
}
