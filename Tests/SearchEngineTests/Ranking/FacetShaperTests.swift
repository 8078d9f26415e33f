import SearchEngine
import Testing
import VisualSearch
import TestSupport

@Suite("FacetShaper", .timeLimit(.minutes(10)))
struct FacetShaperTests {
    static let schema = FieldSchema(fields: ["brand": .string, "price": .float, "title": .text, "count": .int])

    @Test("requested facet fields", arguments: [
        (["brand"], ["brand"]),
        (["price", "brand"], ["price", "brand"]),
        (["*"], ["brand", "count", "price", "title"]),
        (["title", "*"], ["title", "brand", "count", "price"]),
        (["brand", "brand", "*", "price"], ["brand", "count", "price", "title"]),
        ([], []),
    ])
    func fields(requested: [String], expected: [String]) throws {
        #expect(try FacetShaper.fields(requested, schema: Self.schema) == expected)
    }

    @Test("an undeclared field is unknownField with the declared fields, sorted", arguments: ["nope", "Brand", "*brand", ""])
    func unknown(field: String) {
        #expect(throws: VisualSearchError.unknownField(field, known: ["brand", "count", "price", "title"])) {
            try FacetShaper.fields(["brand", field], schema: Self.schema)
        }
    }

    @Test("* over an empty schema is no facet; a named field is unknown, with no known fields")
    func emptySchema() throws {
        #expect(try FacetShaper.fields(["*"], schema: FieldSchema()) == [])
        #expect(throws: VisualSearchError.unknownField("brand", known: [])) { try FacetShaper.fields(["brand"], schema: FieldSchema()) }
    }

    @Test("value facets keep the store's order; counts only with showCount", arguments: [true, false])
    func values(showCount: Bool) {
        let facets = FacetShaper.facets([.values(field: "brand", counts: [(value: "acme", count: 5), (value: "zeta", count: 2)])], showCount: showCount)
        #expect(facets == [Facet(key: "brand", items: [Facet.Item(value: "acme", count: showCount ? 5 : nil),
                                                         Facet.Item(value: "zeta", count: showCount ? 2 : nil)])])
        #expect(FacetShaper.facets([.values(field: "brand", counts: [])], showCount: showCount) == [Facet(key: "brand", items: [])])
    }

    @Test("numeric ranges widen to the enclosing integers", arguments: [
        (9.5, 420.2, "9", "421"),
        (9.0, 420.0, "9", "420"),
        (-0.5, 0.5, "-1", "1"),
        (-2.0, -0.25, "-2", "0"),
        (0.0, 0.0, "0", "0"),
        (-0.0, 1e-9, "0", "1"),
        (3.0000001, 3.9999999, "3", "4"),
    ])
    func range(low: Double, high: Double, min: String, max: String) {
        #expect(FacetShaper.facets([.range(field: "price", min: low, max: high)], showCount: true)
            == [Facet(key: "price", range: Facet.Range(min: min, max: max))])
    }

    @Test("numbers beyond Int are written out in full, not trapped on")
    func hugeRange() throws {
        let facets = FacetShaper.facets([.range(field: "price", min: -1e300, max: Double(Int.max))], showCount: false)
        let range = try #require(facets.first?.range)
        #expect(range.max == "9223372036854775808")  // Int.max as a Double is 2^63
        #expect(range.min.hasPrefix("-1000000000000000") && range.min.count == 302)
        #expect(range.min.dropFirst().allSatisfy { $0.isNumber })
        #expect(Double(range.min) == -1e300)
    }

    @Test("a range without values has no range")
    func emptyRange() {
        #expect(FacetShaper.facets([.range(field: "price", min: nil, max: nil)], showCount: true) == [Facet(key: "price", range: nil)])
        #expect(FacetShaper.facets([.range(field: "price", min: 1, max: nil)], showCount: true) == [Facet(key: "price", range: nil)])
    }

    @Test("facets keep the order of the aggregates")
    func order() {
        let facets = FacetShaper.facets([.range(field: "price", min: 1, max: 2), .values(field: "brand", counts: []),
                                          .range(field: "count", min: nil, max: nil)], showCount: false)
        #expect(facets.map(\.key) == ["price", "brand", "count"])
    }
}
