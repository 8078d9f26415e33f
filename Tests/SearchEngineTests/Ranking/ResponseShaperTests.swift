@testable import SearchEngine
import Testing
import VisualSearch
import TestSupport

@Suite("ResponseShaper", .timeLimit(.minutes(10)))
struct ResponseShaperTests {
    static let rows = ResponseShaper.Rows(names: ["a", "b", "c"], ids: [10, 20, 30])
    static let ranked = Ranking.Ranked(page: [Ranking.Entry(row: 2, score: 0.123_456_78), Ranking.Entry(row: 0, score: 0.5)],
                                       total: 7, matchedRows: nil)
    static let maps: [Int64: [String: String]] = [30: ["brand": "zeta", "price": "9.5"]]

    static func parameters(_ configure: (inout SearchParameters) -> Void = { _ in }) -> SearchParameters {
        var parameters = SearchParameters()
        configure(&parameters)
        return parameters
    }

    static func shape(_ parameters: SearchParameters, facets: Result<[Facet], VisualSearchError>? = nil) -> SearchResponse {
        ResponseShaper(parameters: parameters).searchResponse(method: "search", ranked: ranked, rows: rows, valueMaps: maps,
                                                              facets: facets, requestID: "42")
    }

    @Test("names in ranked order; page, limit, total, method and request id carried over; no scores unless asked")
    func plain() {
        let response = Self.shape(Self.parameters { $0.page = 3; $0.limit = 2 })
        #expect(response == SearchResponse(status: .ok, method: "search", error: [], page: 3, limit: 2, total: 7,
                                           result: [ImageResult(imageName: "c"), ImageResult(imageName: "a")], requestID: "42"))
    }

    @Test("with score=true, scores are rounded to six decimals", arguments: [
        (Float(0.123_456_78), Float(0.123_457)),
        (Float(0.5), Float(0.5)),
        (Float(1), Float(1)),
        (Float(0), Float(0)),
        (Float(0.999_999_9), Float(1)),
        (Float(0.000_000_4), Float(0)),
        (Float(0.333_333_33), Float(0.333_333)),
    ])
    func rounding(score: Float, shown: Float) {
        #expect(ResponseShaper.rounded(score) == shown)
        let ranked = Ranking.Ranked(page: [Ranking.Entry(row: 0, score: score)], total: 1, matchedRows: nil)
        let response = ResponseShaper(parameters: Self.parameters { $0.includesScore = true })
            .searchResponse(method: "search", ranked: ranked, rows: Self.rows, valueMaps: [:], facets: nil, requestID: "1")
        #expect(response.result.first?.score == shown)
    }

    @Test("value_map only when fields are asked for: the named fields, or every field with get_all_fl")
    func valueMaps() {
        let none = ResponseShaper(parameters: Self.parameters())
        #expect(!none.wantsValues)
        #expect(Self.shape(Self.parameters()).result.allSatisfy { $0.valueMap == nil })

        let some = ResponseShaper(parameters: Self.parameters { $0.fields = ["brand"] })
        #expect(some.wantsValues && some.valueFields == ["brand"])
        let all = ResponseShaper(parameters: Self.parameters { $0.returnsAllFields = true; $0.fields = ["brand"] })
        #expect(all.wantsValues && all.valueFields == nil)

        // The shaper shows the maps it is given; an image without values gets an empty map, not none.
        let response = Self.shape(Self.parameters { $0.fields = ["brand"] })
        #expect(response.result.map(\.valueMap) == [["brand": "zeta", "price": "9.5"], [:]])
    }

    @Test("facets are passed through; a facet failure becomes status warning with the error's message")
    func facets() {
        let facets = [Facet(key: "brand", items: [Facet.Item(value: "acme", count: nil)])]
        let ok = Self.shape(Self.parameters(), facets: .success(facets))
        #expect(ok.status == .ok && ok.error.isEmpty && ok.facets == facets)

        let failure = VisualSearchError.unknownField("nope", known: ["brand"])
        let warned = Self.shape(Self.parameters(), facets: .failure(failure))
        #expect(warned.status == .warning)
        #expect(warned.error == [failure.message])
        #expect(warned.facets == nil)
        #expect(warned.result.map(\.imageName) == ["c", "a"])

        #expect(Self.shape(Self.parameters(), facets: nil).facets == nil)
    }

    @Test("ProductSearch shape: product_id is im_name, main_image_url the source, data the value map as strings")
    func product() {
        let search = SearchResponse(method: "uploadsearch", page: 2, limit: 5, total: 9,
                                    result: [ImageResult(imageName: "c", score: 0.75, valueMap: ["brand": "zeta"]),
                                             ImageResult(imageName: "gone", score: 0.5)],
                                    requestID: "77", imageID: "abc.jpg", facets: [Facet(key: "price", range: Facet.Range(min: "1", max: "2"))])
        let sources = ["c": "https://x/c.jpg"]
        let product = ResponseShaper.productResponse(search, method: "product/search_by_image") { sources[$0] }
        #expect(product == ProductSearchResponse(
            requestID: "77", status: .ok, method: "product/search_by_image", imageID: "abc.jpg", page: 2, limit: 5, total: 9,
            productTypes: [],
            result: [ProductSearchResponse.Product(productID: "c", mainImageURL: "https://x/c.jpg", score: 0.75, data: ["brand": .string("zeta")]),
                     ProductSearchResponse.Product(productID: "gone", mainImageURL: nil, score: 0.5, data: nil)],
            facets: [Facet(key: "price", range: Facet.Range(min: "1", max: "2"))]))
    }
}
