import Foundation
import Testing
@testable import VisualSearch

@Suite("fq filters")
struct FilterTests {
    @Test("parse field:value and field=value; the value keeps its own colons")
    func parsing() throws {
        #expect(try Filter(parsing: "brand:nike") == Filter(field: "brand", value: "nike"))
        #expect(try Filter(parsing: "brand=nike", acceptsEquals: true) == Filter(field: "brand", value: "nike"))
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

    @Test("one value that is not a number among many numbers leaves the field numeric (that row is refused, not the field retyped)")
    func inferenceWithATypo() {
        let prices = (1...19).map { ["price": "\($0 * 10)", "weight": "\($0).5"] } + [["price": "notanumber", "weight": "heavy"]]
        #expect(FieldSchema.infer(columns: ["price", "weight"], rows: prices).fields == ["price": .int, "weight": .float])
        // Few values, or more than one in ten not numbers: a string field, as before.
        let few = [["size": "10"], ["size": "12"], ["size": "M"]]
        #expect(FieldSchema.infer(columns: ["size"], rows: few).fields == ["size": .string])
        let mixed = (1...8).map { ["size": "\($0)"] } + [["size": "S"], ["size": "M"]]
        #expect(FieldSchema.infer(columns: ["size"], rows: mixed).fields == ["size": .string])
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
