import Foundation
import Testing
@testable import VisualSearch

@Suite("Wire query encoding (Swift SDK rules)")
struct WireQueryTests {
    @Test("the ProductSearch golden query string of the Swift SDK's tests")
    func productSearchGolden() {
        var query = WireQuery()
        query.append("text_filters", values: ["A:B", "C:D"])
        query.append("score", "true")
        query.append("return_fields_mapping", "true")
        query.append("placement_id", "1")
        query.append("app_key", "APP_KEY")
        #expect(query.encoded == "app_key=APP_KEY&placement_id=1&return_fields_mapping=true&score=true&text_filters=A%3AB&text_filters=C%3AD")
    }

    @Test("reserved characters are encoded; ? and / are not; space is %20",
          arguments: [("brand:nike", "brand%3Anike"), ("10,20,200,300", "10%2C20%2C200%2C300"),
                      ("https://host/a.jpg", "https%3A//host/a.jpg"), ("a b", "a%20b"), ("x?y", "x?y"),
                      ("#[]@!$&'()*+;=", "%23%5B%5D%40%21%24%26%27%28%29%2A%2B%3B%3D"), ("é", "%C3%A9")])
    func escaping(raw: String, expected: String) {
        #expect(WireQuery.escape(raw) == expected)
    }

    @Test("repeated keys keep their order after sorting")
    func repeatedKeys() {
        var query = WireQuery()
        query.append("fl", "price")
        query.append("limit", "10")
        query.append("fl", "brand")
        #expect(query.encoded == "fl=price&fl=brand&limit=10")
    }

    @Test("parsing is lenient: + is a space, escapes decode, malformed escapes survive, empty pairs are skipped")
    func parsing() {
        let query = WireQuery(parsing: "fq=brand%3Anike&fq=price:10,20&q=red+shoe&&bad=%zz&flag")
        #expect(query.values("fq") == ["brand:nike", "price:10,20"])
        #expect(query.first("q") == "red shoe")
        #expect(query.first("bad") == "%zz")
        #expect(query.first("flag") == "")
        #expect(WireQuery(parsing: query.encoded).values("fq") == query.values("fq"))
    }

    @Test("unescaping agrees with Foundation's: UTF-8 escapes decode, an escape that is not UTF-8 or is cut short leaves the text as it came (with + as space)")
    func unescapingAsFoundation() {
        for text in ["caf%C3%A9+bar", "%E9t%E9", "a%2", "%", "100%25", "x%zz%41", "%F0%9F%91%9F+shoe", "+%2B+", "plain", "=%3D"] {
            let spaced = text.replacingOccurrences(of: "+", with: " ")
            #expect(WireQuery.unescape(text) == (spaced.removingPercentEncoding ?? spaced), "\(text)")
        }
        let many = (0..<1200).map { "point=\($0),\($0)" }.joined(separator: "&")
        #expect(WireQuery(parsing: many).values("point").count == 1200)
    }
}
