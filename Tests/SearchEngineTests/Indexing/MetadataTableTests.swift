import Foundation
import SearchEngine
import TestSupport
import Testing
import VisualSearch

@Suite("MetadataTable", .timeLimit(.minutes(10)))
struct MetadataTableTests {
    @Test("CSV: quoted fields with commas, doubled quotes and newlines; CRLF or LF")
    func csv() throws {
        let table = try MetadataTable(csv: "im_name,title,price\r\na,\"Red, \"\"shiny\"\" shoe\",9.5\nb,\"two\nlines\",3\n")
        #expect(table.columns == ["title", "price"])
        #expect(table.order == ["a", "b"])
        #expect(table.rows["a"] == ["title": "Red, \"shiny\" shoe", "price": "9.5"])
        #expect(table.rows["b"]?["title"] == "two\nlines")
    }

    @Test("CSV: im_name may be any column; a repeated name keeps its first position and its last values")
    func csvOrder() throws {
        let table = try MetadataTable(csv: "brand,im_name\nx,a\ny,b\nz,a\n")
        #expect(table.order == ["a", "b"])
        #expect(table.rows["a"] == ["brand": "z"])
    }

    @Test("CSV rows with the wrong number of values name the row; a header without im_name is an error")
    func csvErrors() {
        #expect(throws: VisualSearchError.invalidMetadata(row: 3, field: "*", reason: "1 values for 2 columns")) {
            try MetadataTable(csv: "im_name,x\na,1\nb\n")
        }
        #expect(throws: VisualSearchError.invalidMetadata(row: 2, field: "im_name", reason: "empty")) {
            try MetadataTable(csv: "im_name,x\n,1\n")
        }
        #expect(throws: VisualSearchError.self) { try MetadataTable(csv: "name,x\na,1\n") }
        #expect(throws: VisualSearchError.self) { try MetadataTable(csv: "") }
    }

    @Test("JSON lines: numbers and booleans become text; blank lines are skipped")
    func jsonLines() throws {
        let table = try MetadataTable(jsonLines: "{\"im_name\":\"a\",\"price\":9.5,\"count\":3,\"new\":true}\n\n{\"im_name\":\"b\",\"brand\":\"z\"}\n")
        #expect(table.rows["a"] == ["price": "9.5", "count": "3", "new": "true"])
        #expect(table.rows["b"] == ["brand": "z"])
        #expect(table.order == ["a", "b"])
        #expect(throws: VisualSearchError.invalidMetadata(row: 1, field: "im_name", reason: "missing")) { try MetadataTable(jsonLines: "{\"price\":1}\n") }
        #expect(throws: VisualSearchError.invalidMetadata(row: 2, field: "*", reason: "not a JSON object")) {
            try MetadataTable(jsonLines: "{\"im_name\":\"a\"}\nnot json\n")
        }
    }

    @Test("files are read by extension: .csv, .jsonl")
    func files() throws {
        let folder = Repository.temporaryDirectory("metadata")
        try Data("im_name,brand\na,x\n".utf8).write(to: URL(fileURLWithPath: folder + "/m.csv"))
        try Data("{\"im_name\":\"a\",\"brand\":\"x\"}\n".utf8).write(to: URL(fileURLWithPath: folder + "/m.jsonl"))
        #expect(try MetadataTable(contentsOf: folder + "/m.csv").rows == ["a": ["brand": "x"]])
        #expect(try MetadataTable(contentsOf: folder + "/m.jsonl").rows == ["a": ["brand": "x"]])
        #expect(throws: VisualSearchError.self) { try MetadataTable(contentsOf: folder + "/absent.csv") }
        let corpus = try MetadataTable(contentsOf: Repository.metadata)
        #expect(corpus.order.count == 102 && corpus.rows["chelsea_cat"]?["brand"] == "scikit-image")
    }

    @Test("values that do not fit their type are reported with the field; empty values always fit")
    func validation() {
        let schema = FieldSchema(fields: ["count": .int, "price": .float, "brand": .string])
        #expect(MetadataTable.validate(["count": "3", "price": "1.5", "brand": "anything"], schema: schema) == nil)
        #expect(MetadataTable.validate(["count": "", "price": ""], schema: schema) == nil)
        #expect(MetadataTable.validate(["count": "three"], schema: schema)?.field == "count")
        #expect(MetadataTable.validate(["count": "2.5"], schema: schema)?.field == "count")
        #expect(MetadataTable.validate(["price": "inf"], schema: schema)?.field == "price")
        #expect(MetadataTable.validate(["price": "nan"], schema: schema)?.field == "price")
        #expect(MetadataTable.validate(["undeclared": "x"], schema: schema) == nil)
    }

    @Test("types are inferred from the values: int, float, string, text")
    func inference() throws {
        let table = try MetadataTable(contentsOf: Repository.metadata)
        let schema = FieldSchema.infer(columns: table.columns, rows: table.order.compactMap { table.rows[$0] })
        #expect(schema.fields["price"] == .float)
        #expect(schema.fields["count"] == .int && schema.fields["width"] == .int)
        #expect(schema.fields["brand"] == .string && schema.fields["category"] == .string)
        #expect(schema.fields["description"] == .text)
    }
}
