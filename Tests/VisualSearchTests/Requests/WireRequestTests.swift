import Foundation
import ImageOps
import Testing
@testable import VisualSearch

/// Every request's wire form is defined once: what the client encodes, the
/// server decodes back to the same request.
@Suite("Typed requests on the wire")
struct WireRequestTests {
    static func parameters() -> SearchParameters {
        var parameters = SearchParameters()
        parameters.page = 2
        parameters.limit = 7
        parameters.fields = ["brand", "price"]
        parameters.filters = [Filter(field: "brand", value: "acme"), Filter(field: "price", value: "10,99.5")]
        parameters.facets = ["brand"]
        parameters.facetsShowCount = true
        parameters.scoreMin = 0.25
        parameters.includesScore = true
        parameters.deduplicates = true
        return parameters
    }

    static func roundTrip<Request: WireRequest>(_ request: Request) throws -> Request {
        try Request(wire: try request.wireMessage())
    }

    @Test("ViSearch requests decode to what was encoded")
    func viSearchRoundTrips() throws {
        let parameters = Self.parameters()
        #expect(try Self.roundTrip(SearchRequest(imageName: "dress 1/a", parameters: parameters)) == SearchRequest(imageName: "dress 1/a", parameters: parameters))
        #expect(try Self.roundTrip(RecommendationsRequest(imageName: "x", parameters: parameters)) == RecommendationsRequest(imageName: "x", parameters: parameters))
        let color = ColorSearchRequest(color: try HexColor(parsing: "#F0F"), parameters: parameters)
        #expect(try Self.roundTrip(color) == color)
        let upload = UploadSearchRequest(ImageQuery(.bytes([1, 2, 3]), box: PixelBox(x1: 1, y1: 2, x2: 30, y2: 40), preparation: nil), parameters: parameters)
        #expect(try Self.roundTrip(upload) == upload)
        let byURL = UploadSearchRequest(ImageQuery(.url("https://cdn.example/a.jpg"), preparation: nil), parameters: parameters)
        #expect(try Self.roundTrip(byURL) == byURL)
        let byID = UploadSearchRequest(ImageQuery(.imageID("abc.jpg"), preparation: nil), parameters: parameters)
        #expect(try Self.roundTrip(byID) == byID)
        let discover = DiscoverSearchRequest(ImageQuery(.bytes([9]), preparation: nil), points: [PixelPoint(x: 3, y: 4), PixelPoint(x: 5, y: 6)],
                                             resultLimit: 4, detectionLimit: 2, parameters: parameters)
        #expect(try Self.roundTrip(discover) == discover)
    }

    @Test("ProductSearch and data API requests decode to what was encoded")
    func otherRoundTrips() throws {
        var parameters = Self.parameters()
        parameters.fields = []
        parameters.returnsAllFields = true  // ProductSearch: no attrs_to_get means every field
        let product = ProductSearchRequest(ImageQuery(.imageID("abc.jpg"), preparation: nil), parameters: parameters)
        #expect(try Self.roundTrip(product).query == product.query)
        let recommendations = ProductRecommendationsRequest(productID: "p/1 ?", parameters: parameters)
        #expect(try Self.roundTrip(recommendations).productID == "p/1 ?")
        let insert = InsertRequest(items: [InsertItem(imageName: "a", imageURL: "https://x/a.jpg", metadata: ["brand": "acme"]),
                                           InsertItem(imageName: "b", imageURL: "file:///srv/b.jpg")])
        #expect(try Self.roundTrip(insert) == insert)
        #expect(try Self.roundTrip(InsertStatusRequest(transactionID: "1234567890123456789")).transactionID == "1234567890123456789")
        #expect(try Self.roundTrip(RemoveRequest(imageNames: ["a", "b c"])) == RemoveRequest(imageNames: ["a", "b c"]))
    }

    @Test("the Swift SDK's encoding, byte for byte")
    func golden() throws {
        var parameters = SearchParameters()
        parameters.filters = [Filter(field: "brand", value: "nike")]
        let message = try SearchRequest(imageName: "chelsea_cat", parameters: parameters).wireMessage()
        #expect(message.query.encoded
            == "fq=brand%3Anike&get_all_fl=false&im_name=chelsea_cat&limit=10&page=1&score=false&score_max=1.000000&score_min=0.000000")
        let color = try ColorSearchRequest(color: try HexColor(parsing: "#f0f")).wireMessage()
        #expect(color.query.string("color") == "ff00ff")
        #expect(ProductRecommendationsRequest.endpoint.path(parameter: "a/b") == "v1/product/recommendations/a%2Fb")
    }

    @Test("what cannot travel or is malformed is refused, naming the parameter")
    func refusals() throws {
        #expect(throws: VisualSearchError.invalidParameter(name: "im_name", reason: "required")) {
            try SearchRequest(wire: WireMessage())
        }
        #expect(throws: VisualSearchError.self) { try UploadSearchRequest(ImageQuery(.file("/tmp/x.jpg"))).wireMessage() }
        #expect(throws: VisualSearchError.invalidParameter(name: "image", reason: "send a multipart image part, im_url or im_id")) {
            try UploadSearchRequest(wire: WireMessage())
        }
        var query = WireQuery()
        query.append("box", "1,2,3")
        query.append("im_id", "x")
        #expect(throws: VisualSearchError.self) { try UploadSearchRequest(wire: WireMessage(query: query)) }
        var points = WireQuery()
        points.append("im_id", "x")
        points.append("point", "1")
        #expect(throws: VisualSearchError.self) { try DiscoverSearchRequest(wire: WireMessage(query: points)) }
        #expect(throws: VisualSearchError.self) { try InsertStatusRequest(wire: WireMessage(pathParameter: "../../etc")) }
        #expect(throws: VisualSearchError.self) { try RemoveRequest(imageNames: []).wireMessage() }
        var placement = WireQuery()
        placement.append("placement_id", "abc")
        #expect(throws: VisualSearchError.self) { try ProductRecommendationsRequest(wire: WireMessage(query: placement, pathParameter: "p")) }
    }

    @Test("a box coordinate beyond 32 bits is refused on the wire (fuzz finding: Fuzz/Regressions/query/box-beyond-int32.txt)",
          arguments: ["9223372036854775807,0,9223372036854775807,5", "0,0,2147483648,10", "-2147483649,0,10,10"])
    func boxBeyondInt32(text: String) {
        var query = WireQuery()
        query.append("im_id", "x")
        query.append("box", text)
        #expect(throws: VisualSearchError.invalidParameter(name: "box", reason: "\"\(text)\" has a coordinate beyond ±2147483647")) {
            try UploadSearchRequest(wire: WireMessage(query: query))
        }
        query = WireQuery()
        query.append("im_id", "x")
        query.append("box", "-2147483648,0,2147483647,10")
        #expect(throws: Never.self) { try UploadSearchRequest(wire: WireMessage(query: query)) }
    }

    @Test("a discover request's points near Int.max survive preparation (fuzz finding: Fuzz/Regressions/query/point-near-int-max.txt)")
    func pointNearIntMax() throws {
        let request = try DiscoverSearchRequest(wire: WireMessage(query: WireQuery(parsing: "im_id=a&point=9223372036854775807,0")))
        let prepared = try request.prepared()
        #expect(prepared.points == [PixelPoint(x: .max, y: 0)])
        #expect(DiscoverSearchRequest.scaled(1001, by: 0.5) == 500)
        #expect(DiscoverSearchRequest.scaled(.max, by: 2) == .max)
        #expect(DiscoverSearchRequest.scaled(.min, by: 1) == .min)
    }

    @Test("colours parse the same everywhere", arguments: [
        ("ff00ff", "ff00ff"), ("#FF00FF", "ff00ff"), ("f0f", "ff00ff"), ("#f0f", "ff00ff"), ("C45B3B", "c45b3b"),
    ])
    func colors(text: String, hex: String) throws {
        #expect(try HexColor(parsing: text).hex == hex)
    }

    @Test("malformed colours are refused naming color", arguments: ["", "#", "ff00f", "ggg", "#ff00ff00", " f0f"])
    func badColors(text: String) {
        #expect(throws: VisualSearchError.self) { try HexColor(parsing: text) }
    }

    @Test("one filter parser: ':' on the wire, '=' also on the command line")
    func filters() throws {
        #expect(try Filter(parsing: "brand:nike") == Filter(field: "brand", value: "nike"))
        #expect(try Filter(parsing: "url:http://x/y") == Filter(field: "url", value: "http://x/y"))
        #expect(throws: VisualSearchError.self) { try Filter(parsing: "brand=nike") }
        #expect(try Filter(parsing: "brand=nike", acceptsEquals: true) == Filter(field: "brand", value: "nike"))
        #expect(throws: VisualSearchError.invalidParameter(name: "filters", reason: "\":x\" has no field name")) {
            try Filter(parsing: ":x", parameter: "filters")
        }
    }
}
