import TestSupport
import Testing
@testable import VisualSearch

/// Multipart parsing is linear in the body whatever the boundary (issue 37,
/// item 2: a 16 MB body of near-matches of a 200-dash boundary cost 0.87 s),
/// and exact at the edges: near-matches inside parts, a delimiter right after
/// a partial one, CRLF before the delimiter belongs to it and nothing else.
@Suite("Multipart parsing: cost and edges")
struct MultipartParsingTests {
    /// `--B\r\n` + headers + data + `\r\n--B--\r\n`: one part named `image` holding `data`.
    static func body(boundary: String, data: [UInt8], preamble: [UInt8] = []) -> [UInt8] {
        preamble + Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"image\"; filename=\"a.jpg\"\r\n\r\n".utf8)
            + data + Array("\r\n--\(boundary)--\r\n".utf8)
    }

    static func contentType(_ boundary: String) -> String { "multipart/form-data; boundary=\(boundary)" }

    @Test("near-matches of a 70-dash boundary cost at most two looks a byte, in the preamble and in a part")
    func adversarialBodyIsLinear() throws {
        let boundary = String(repeating: "-", count: MultipartForm.maximumBoundaryLength)
        // 71 dashes then X, again and again: every position starts a match of up to 71 bytes of "--" + 70 dashes.
        let nearMiss = Array(String(repeating: "-", count: 71).utf8) + [88]
        let filler = Array([[UInt8]](repeating: nearMiss, count: 8_000).joined())  // 576 kB
        // In a part the delimiter is CRLF + dashes: near-matches of that, too.
        let inPart = Array([[UInt8]](repeating: [13, 10] + nearMiss, count: 8_000).joined()) + filler
        let body = Self.body(boundary: boundary, data: inPart, preamble: filler + [13, 10])
        var examined = 0
        let parts = try MultipartForm.parse(body, contentType: Self.contentType(boundary), examined: &examined)
        #expect(parts.count == 1)
        #expect(parts.first?.data == inPart)
        // The naive search this replaced compared up to the boundary's length at each position: 13 looks a byte here.
        #expect(examined <= 2 * body.count, "\(examined) looks for \(body.count) bytes")
    }

    @Test("the search looks at most twice at each byte, and finds what a naive search finds",
          arguments: [2, 3, 5, 8])
    func patternAgreesWithNaiveSearch(alphabet: Int) {
        var random = TestSeed("BytePattern over \(alphabet) byte values")
        for _ in 0..<400 {
            let needle = (0..<Int(random.next() % 6 + 1)).map { _ in UInt8(random.next() % UInt64(alphabet)) }
            let haystack = (0..<Int(random.next() % 300)).map { _ in UInt8(random.next() % UInt64(alphabet)) }
            let start = haystack.isEmpty ? 0 : Int(random.next() % UInt64(haystack.count))
            var examined = 0
            let found = BytePattern(needle).firstIndex(in: haystack, from: start, examined: &examined)
            #expect(found == Self.naiveFirstIndex(of: needle, in: haystack, from: start), "\(needle) in \(haystack) from \(start)")
            #expect(examined <= 2 * max(0, haystack.count - start))
        }
    }

    @Test("a delimiter that starts inside a partial match of itself is found")
    func delimiterAfterPartialMatch() throws {
        // Boundary "-x": the first delimiter is "---x". The body starts "----x": a match of "---" fails on
        // the fourth "-", and the real delimiter begins one byte in, inside the failed match.
        let boundary = "-x"
        let data = Array("v\r\n---".utf8)  // a part ending with a prefix of the delimiter's dashes
        let body = Array("-".utf8) + Self.body(boundary: boundary, data: data)
        let parts = try MultipartForm.parse(body, contentType: Self.contentType(boundary))
        #expect(parts.map(\.data) == [data])
    }

    @Test("near-matches inside a part stay in its data byte for byte")
    func nearMatchesInsideParts() throws {
        let boundary = "visearch.boundary.0000000100000002"
        let data = Array(("--\(boundary)\r\n"                         // the delimiter without CRLF before it: data
                          + "\r\n--visearch.boundary.000000010000000X"  // one byte off
                          + "\n--\(boundary)"                           // LF alone is not the delimiter's CRLF
                          + "\r--\(boundary)"                           // nor CR alone
                          + "\r\n--visearch.boundary.00000001").utf8)   // a prefix of it, at the end of the part
        let parts = try MultipartForm.parse(Self.body(boundary: boundary, data: data), contentType: Self.contentType(boundary))
        #expect(parts.count == 1)
        #expect(parts.first?.data == data)
    }

    @Test("the CRLF before a delimiter belongs to it; CRLFs of the data are kept")
    func crlfHandling() throws {
        let boundary = "b0undary"
        for data in [[], [13], [10], [13, 10], [13, 10, 13, 10], Array("line\r\n\r\n".utf8)] as [[UInt8]] {
            var form = MultipartForm(boundary: boundary)
            form.append(field: "limit", value: "5")
            form.append(file: "image", filename: "a.jpg", contentType: "image/jpeg", data: data)
            let parts = try MultipartForm.parse(form.encoded, contentType: form.contentType)
            #expect(parts.map(\.name) == ["limit", "image"])
            #expect(parts.last?.data == data, "\(data)")
            #expect(parts.first?.text == "5")
        }
        // The closing delimiter may be the last bytes, without a CRLF after it.
        let closedAtEnd = Array("--b\r\nContent-Disposition: form-data; name=\"q\"\r\n\r\nv\r\n--b--".utf8)
        #expect(try MultipartForm.parse(closedAtEnd, contentType: Self.contentType("b")).map(\.text) == ["v"])
    }

    @Test("a boundary of RFC 2046's 70 characters is accepted; 71 is refused naming the problem")
    func boundaryLength() throws {
        let longest = String(repeating: "7", count: 70)
        #expect(try MultipartForm.parse(Self.body(boundary: longest, data: [1, 2]), contentType: Self.contentType(longest)).count == 1)
        let tooLong = String(repeating: "-", count: 200)
        let error = #expect(throws: VisualSearchError.self) {
            try MultipartForm.parse(Self.body(boundary: tooLong, data: [1, 2]), contentType: Self.contentType(tooLong))
        }
        #expect(error == .invalidParameter(name: "multipart", reason: "the boundary is 200 characters long; RFC 2046 allows at most 70"))
    }

    @Test("a body of more than 1,000 parts is refused after the 1,000th, naming the limit")
    func tooManyParts() throws {
        var form = MultipartForm(boundary: "b")
        for index in 0..<MultipartForm.maximumParts { form.append(field: "fq", value: "f:\(index)") }
        #expect(try MultipartForm.parse(form.encoded, contentType: form.contentType).count == MultipartForm.maximumParts)
        form.append(field: "fq", value: "one:more")
        let error = #expect(throws: VisualSearchError.self) { try MultipartForm.parse(form.encoded, contentType: form.contentType) }
        #expect(error == .invalidParameter(name: "multipart", reason: "the body holds more than 1000 parts"))
    }

    static func naiveFirstIndex(of needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard needle.count <= haystack.count - start else { return nil }
        return (start...(haystack.count - needle.count)).first { Array(haystack[$0..<($0 + needle.count)]) == needle }
    }
}
