import Foundation
import ImageOps
import Testing
@testable import VisualSearch

@Suite("fq filters")
struct FilterTests {
    @Test("parse field:value and field=value; the value keeps its own colons")
    func parsing() throws {
        #expect(try Filter(parsing: "brand:nike") == Filter(field: "brand", value: "nike"))
        #expect(try Filter(parsing: "brand=nike") == Filter(field: "brand", value: "nike"))
        #expect(try Filter(parsing: "url:http://x/y") == Filter(field: "url", value: "http://x/y"))
        #expect(throws: VisualSearchError.self) { try Filter(parsing: "novalue") }
        #expect(throws: VisualSearchError.self) { try Filter(parsing: ":x") }
    }

    @Test("numeric values are an exact number or an inclusive range min,max",
          arguments: [("10", Filter.NumericCondition.equals(10)), ("1.5,20", .range(1.5, 20)), (" 3 , 4 ", .range(3, 4))])
    func numeric(value: String, expected: Filter.NumericCondition) throws {
        #expect(try Filter(field: "price", value: value).numericCondition() == expected)
    }

    @Test("malformed numeric values are errors", arguments: ["abc", "5,1", "1,2,3", "nan", ",", "inf,1"])
    func badNumeric(value: String) {
        #expect(throws: VisualSearchError.self) { try Filter(field: "price", value: value).numericCondition() }
    }
}

@Suite("Field schema")
struct FieldSchemaTests {
    @Test("parses name:type lists and rejects unknown types and bad names")
    func parsing() throws {
        let schema = try FieldSchema(parsing: "brand:string, description:text,price:FLOAT,count:int")
        #expect(schema.fields == ["brand": .string, "description": .text, "price": .float, "count": .int])
        for bad in ["brand", "brand:blob", "1abc:int", "im_name:string", "a b:int", "x;drop:int"] {
            #expect(throws: VisualSearchError.self) { try FieldSchema(parsing: bad) }
        }
    }

    @Test("infers int, float, string and text from values")
    func inference() {
        let rows: [[String: String]] = [
            ["n": "1", "p": "1.5", "b": "acme", "d": "a long description of a red shoe with laces and a sole"],
            ["n": "22", "p": "3", "b": "zeta", "d": "another long description that has many many words in it"],
        ]
        let schema = FieldSchema.infer(columns: ["n", "p", "b", "d", "im_name"], rows: rows)
        #expect(schema.fields == ["n": .int, "p": .float, "b": .string, "d": .text])
    }
}

@Suite("Metadata files")
struct MetadataTableTests {
    @Test("CSV: quoted fields with commas, doubled quotes and newlines")
    func csv() throws {
        let table = try MetadataTable(csv: "im_name,title,price\r\na,\"Red, \"\"shiny\"\" shoe\",9.5\nb,\"two\nlines\",3\n")
        #expect(table.order == ["a", "b"])
        #expect(table.rows["a"] == ["title": "Red, \"shiny\" shoe", "price": "9.5"])
        #expect(table.rows["b"]?["title"] == "two\nlines")
    }

    @Test("CSV rows with the wrong number of values name the row")
    func csvErrors() {
        #expect(throws: VisualSearchError.invalidMetadata(row: 3, field: "*", reason: "1 values for 2 columns")) {
            try MetadataTable(csv: "im_name,x\na,1\nb\n")
        }
        #expect(throws: VisualSearchError.self) { try MetadataTable(csv: "name,x\na,1\n") }
    }

    @Test("JSON lines: numbers and booleans become text")
    func jsonLines() throws {
        let table = try MetadataTable(jsonLines: "{\"im_name\":\"a\",\"price\":9.5,\"count\":3,\"new\":true}\n\n{\"im_name\":\"b\",\"brand\":\"z\"}\n")
        #expect(table.rows["a"] == ["price": "9.5", "count": "3", "new": "true"])
        #expect(table.rows["b"] == ["brand": "z"])
        #expect(throws: VisualSearchError.self) { try MetadataTable(jsonLines: "{\"price\":1}\n") }
        #expect(throws: VisualSearchError.self) { try MetadataTable(jsonLines: "not json\n") }
    }

    @Test("values that do not fit their type are reported with the field")
    func validation() {
        let schema = FieldSchema(fields: ["count": .int, "price": .float])
        #expect(MetadataTable.validate(["count": "3", "price": "1.5"], schema: schema) == nil)
        #expect(MetadataTable.validate(["count": "three"], schema: schema)?.field == "count")
        #expect(MetadataTable.validate(["price": "inf"], schema: schema)?.field == "price")
    }
}

@Suite("Colours")
struct ColorTests {
    @Test("hex colours parse in their ViSearch and CSS forms", arguments: ["ff00ff", "#FF00FF", "#f0f", "f0f", " ff00ff "])
    func hex(text: String) throws {
        #expect(try LabColor(hex: text).hex == "ff00ff")
    }

    @Test("invalid colours are errors", arguments: ["", "#ff00f", "gg0000", "ff00ff00", "red"])
    func badHex(text: String) {
        #expect(throws: ImageOpsError.self) { try LabColor(hex: text) }
    }

    @Test("feature vectors have unit length; identical images score 1; degenerate images do not crash")
    func features() throws {
        let photo = try ImageDecoder.decode(fileAt: Corpus.images + "/chelsea_cat.jpg").pixels
        let vector = ColorFeatures.vector(of: photo)
        #expect(vector.count == ColorFeatures.dimensions)
        #expect(abs(vector.reduce(0) { $0 + $1 * $1 } - 1) < 1e-3)
        let dot = zip(vector, vector).reduce(0) { $0 + $1.0 * $1.1 }
        #expect(ColorFeatures.score(dot: dot) > 0.999)
        let tiny = ColorFeatures.vector(of: PixelBuffer(width: 1, height: 1, hasAlpha: false, fill: (255, 0, 0, 255)))
        #expect(abs(tiny.reduce(0) { $0 + $1 * $1 } - 1) < 1e-3)
        let clear = ColorFeatures.vector(of: PixelBuffer(width: 4, height: 4, hasAlpha: true, fill: (0, 0, 0, 0)))
        #expect(clear.allSatisfy { $0 == 0 })
    }

    @Test("a palette covers the image; coverage of its main colour is high, of a far colour zero")
    func palette() throws {
        let half = PixelBuffer(width: 40, height: 40, hasAlpha: false, initializingWith: { out in
            for i in stride(from: 0, to: out.count, by: 4) {
                let red = (i / 4) % 40 < 20
                out[i] = red ? 220 : 20; out[i + 1] = red ? 20 : 20; out[i + 2] = red ? 20 : 200; out[i + 3] = 255
            }
        })
        let palette = DominantColors.palette(of: half)
        #expect(abs(palette.entries.reduce(0) { $0 + $1.fraction } - 1) < 1e-3)
        #expect(palette.coverage(of: LabColor(red: 220, green: 20, blue: 20)) > 0.45)
        #expect(palette.coverage(of: LabColor(red: 20, green: 220, blue: 20)) < 0.05)
    }
}

@Suite("Response JSON shapes")
struct ResponseShapeTests {
    @Test("a ViSearch response encodes the wire keys")
    func encoding() throws {
        let response = SearchResponse(method: "search", page: 1, limit: 2, total: 5,
                                      result: [ImageResult(imageName: "a", score: 0.5, valueMap: ["price": "9.5"])],
                                      requestID: "123", imageID: "x.jpg",
                                      facets: [Facet(key: "brand", items: [.init(value: "acme", count: 2)]),
                                               Facet(key: "price", range: .init(min: "1", max: "9"))])
        let object = try JSONSerialization.jsonObject(with: JSONEncoder().encode(response)) as? [String: Any]
        #expect(Set(object?.keys.map { $0 } ?? []) == ["status", "method", "error", "page", "limit", "total", "result", "reqid", "im_id", "facets"])
        #expect(object?["status"] as? String == "OK")
        let first = (object?["result"] as? [[String: Any]])?.first
        #expect(first?["im_name"] as? String == "a")
        #expect((first?["value_map"] as? [String: String])?["price"] == "9.5")
    }

    @Test("the sample bodies of the wire reference decode, including failures and odd status case")
    func decoding() throws {
        let ok = """
        {"status":"OK","method":"search","error":[],"page":1,"limit":2,"total":240,
         "result":[{"im_name":"dress_017","score":0.9132,"value_map":{"price":"59.900000","brand":"acme"}}],
         "facets":[{"key":"brand","items":[{"value":"acme","count":120}]},{"key":"price","range":{"min":"9","max":"420"}}],
         "reqid":"1158812345678901234"}
        """
        let response = try JSONDecoder().decode(SearchResponse.self, from: Data(ok.utf8))
        #expect(response.total == 240 && response.result.first?.valueMap?["brand"] == "acme")
        #expect(response.facets?.last?.range?.max == "420")
        let fail = try JSONDecoder().decode(SearchResponse.self, from: Data(#"{"status":"Fail","method":"search","error":["Image not found with im_name."],"page":0,"limit":0,"total":0,"result":[]}"#.utf8))
        #expect(fail.status == .fail && fail.error == ["Image not found with im_name."])
        #expect(throws: (any Error).self) { try JSONDecoder().decode(SearchResponse.self, from: Data("{}".utf8)) }
    }
}
