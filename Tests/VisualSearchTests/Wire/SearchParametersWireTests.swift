import Testing
import ImageOps
@testable import VisualSearch

@Suite("SearchParameters on the wire")
struct SearchParametersWireTests {
    @Test("ViSearch defaults: exactly what the Swift SDK sends")
    func viSearchDefaults() {
        #expect(SearchParameters().wireQuery(for: .viSearch).encoded
                == "get_all_fl=false&limit=10&page=1&score=false&score_max=1.000000&score_min=0.000000")
    }

    @Test("ViSearch: repeated fq and fl, facets with their options, box and dedup")
    func viSearchFull() {
        var parameters = SearchParameters()
        parameters.limit = 2
        parameters.page = 3
        parameters.includesScore = true
        parameters.scoreMin = 0.5
        parameters.filters = [Filter(field: "brand", value: "nike"), Filter(field: "price", value: "10,99.5")]
        parameters.fields = ["price", "brand"]
        parameters.facets = ["brand", "price"]
        parameters.facetsShowCount = true
        parameters.deduplicates = true
        #expect(parameters.wireQuery(for: .viSearch).encoded == "dedup=true&facets=brand&facets=price&facets_limit=10&facets_show_count=true"
                + "&fl=price&fl=brand&fq=brand%3Anike&fq=price%3A10%2C99.5&get_all_fl=false&limit=2&page=3&score=true"
                + "&score_max=1.000000&score_min=0.500000")
    }

    @Test("ProductSearch: sorted filters, attrs_to_get, only what is set")
    func productSearch() {
        var parameters = SearchParameters()
        parameters.filters = [Filter(field: "C", value: "D"), Filter(field: "A", value: "B")]
        parameters.fields = ["title"]
        parameters.includesScore = true
        #expect(parameters.wireQuery(for: .productSearch).encoded == "attrs_to_get=title&filters=A%3AB&filters=C%3AD&limit=10&page=1&score=true")
    }

    @Test("round trip: what the client encodes, the server reads back", arguments: [SearchParameters.WireDialect.viSearch, .productSearch])
    func roundTrip(dialect: SearchParameters.WireDialect) throws {
        var parameters = SearchParameters()
        parameters.limit = 7
        parameters.page = 2
        parameters.includesScore = true
        parameters.scoreMin = 0.25
        parameters.filters = [Filter(field: "brand", value: "a b"), Filter(field: "price", value: "1,2")]
        parameters.fields = ["brand"]
        parameters.facets = ["brand"]
        parameters.facetsLimit = 3
        parameters.nearestNeighbours = .approximate
        parameters.efSearch = 250
        let decoded = try SearchParameters(wire: WireQuery(parsing: parameters.wireQuery(for: dialect).encoded), dialect: dialect)
        #expect(decoded.nearestNeighbours == .approximate && decoded.efSearch == 250)
        #expect(decoded.limit == 7 && decoded.page == 2 && decoded.includesScore && decoded.scoreMin == 0.25 && decoded.scoreMax == nil)
        #expect(Set(decoded.filters) == Set(parameters.filters))
        #expect(decoded.fields == ["brand"] && decoded.facets == ["brand"] && decoded.facetsLimit == 3)
    }

    @Test("lenient reading: True/1, comma-joined facets, Java's vs_fq")
    func lenient() throws {
        let query = WireQuery(parsing: "score=True&get_all_fl=1&facets=brand,price&facets=category&vs_fq=brand:x&facets_show_count=TRUE")
        let parameters = try SearchParameters(wire: query, dialect: .viSearch)
        #expect(parameters.includesScore && parameters.returnsAllFields && parameters.facetsShowCount)
        #expect(parameters.facets == ["brand", "price", "category"])
        #expect(parameters.filters == [Filter(field: "brand", value: "x")])
    }

    @Test("malformed values name their parameter",
          arguments: [("page=0", "page"), ("limit=abc", "limit"), ("score=maybe", "score"), ("fq=nocolon", "fq"),
                      ("score_min=2", "score_min"), ("facets_limit=0", "facets_limit"), ("knn=fast", "knn"),
                      ("ef_search=0", "ef_search"), ("ef_search=1001", "ef_search")])
    func malformed(text: String, parameter: String) {
        #expect(throws: VisualSearchError.self) { try SearchParameters(wire: WireQuery(parsing: text), dialect: .viSearch) }
        do { _ = try SearchParameters(wire: WireQuery(parsing: text), dialect: .viSearch) } catch {
            guard case .invalidParameter(let name, _) = error else { Issue.record("\(error)"); return }
            #expect(name == parameter)
        }
    }

    @Test("data API items: indexed fields both ways")
    func insertItems() throws {
        let items = [InsertItem(imageName: "a", imageURL: "http://h/a.jpg", metadata: ["brand": "x"]), InsertItem(imageName: "b", imageURL: "/tmp/b.jpg")]
        let query = InsertItem.wireQuery(items)
        #expect(query.encoded == "brand%5B0%5D=x&im_name%5B0%5D=a&im_name%5B1%5D=b&im_url%5B0%5D=http%3A//h/a.jpg&im_url%5B1%5D=/tmp/b.jpg")
        #expect(try InsertItem.items(from: WireQuery(parsing: query.encoded)) == items)
        #expect(throws: VisualSearchError.self) { try InsertItem.items(from: WireQuery(parsing: "im_name[0]=a")) }
    }
}

@Suite("Multipart bodies")
struct MultipartFormTests {
    @Test("the Swift SDK's zero-part body parses to no parts")
    func zeroParts() throws {
        let form = MultipartForm(boundary: "visearch.boundary.0000000100000002")
        #expect(form.encoded == Array("\r\n--visearch.boundary.0000000100000002--\r\n".utf8))
        #expect(try MultipartForm.parse(form.encoded, contentType: form.contentType).isEmpty)
        #expect(try MultipartForm.parse([], contentType: form.contentType).isEmpty)
    }

    @Test("an image part and text parts survive a round trip byte for byte")
    func roundTrip() throws {
        var form = MultipartForm()
        let binary: [UInt8] = [0xFF, 0xD8, 13, 10, 45, 45, 0, 0xFF, 0xD9]
        form.append(field: "limit", value: "5")
        form.append(file: "image", filename: "image.jpeg", contentType: "image/jpeg", data: binary)
        let parts = try MultipartForm.parse(form.encoded, contentType: form.contentType)
        #expect(parts.count == 2)
        #expect(parts[0].name == "limit" && parts[0].text == "5" && parts[0].filename == nil)
        #expect(parts[1].name == "image" && parts[1].filename == "image.jpeg" && parts[1].contentType == "image/jpeg" && parts[1].data == binary)
    }

    @Test("garbage is a typed error, never a crash",
          arguments: ["--b\r\nno blank line", "--b\r\nContent-Disposition: form-data\r\n\r\nx\r\n--b--", "--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nunterminated",
                      "random bytes", "--bX"])
    func garbage(body: String) {
        #expect(throws: VisualSearchError.self) { try MultipartForm.parse(Array(body.utf8), contentType: "multipart/form-data; boundary=b") }
    }

    @Test("a content type without a boundary is refused")
    func noBoundary() {
        #expect(MultipartForm.boundary(ofContentType: "multipart/form-data") == nil)
        #expect(MultipartForm.boundary(ofContentType: "multipart/form-data; boundary=\"q b\"") == "q b")
    }
}
