import Foundation
import Testing
import VisualSearch
@testable import VisualSearchServer

/// Issue 37, item 3, in pieces: what each kind of key may do, and which paths are the data API.
@Suite("Key roles")
struct KeyRolesTests {
    @Test("the data API's paths, in every spelling the router accepts; nothing else is",
          arguments: [("/insert", true), ("/insert/", true), ("//remove", true), ("/remove", true), ("/insert/status/123", true),
                      ("/insert/status/123/", true), ("/insert/status", false), ("/search", false), ("/uploadsearch", false),
                      ("/v3/events", false), ("/insert/status/1/2", false), ("/removed", false)])
    func dataAPIPaths(path: String, isDataAPI: Bool) {
        #expect(RoutePath.isDataAPI(path) == isDataAPI)
    }

    @Test("an app key searches (and is refused by the data API with 403 naming the roles); an access key with its secret does both")
    func roles() throws {
        let keys = try ServerCredentials(lines: "app\nACCESS:SECRET")
        let basic = "Basic " + Data("ACCESS:SECRET".utf8).base64EncodedString()
        let app = WireQuery(parsing: "access_key=app")
        #expect(keys.verdict(authorization: nil, parameters: app) == .verified(key: "app", role: .app))
        #expect(keys.verdict(authorization: basic, parameters: WireQuery()) == .verified(key: "ACCESS", role: .access))
        #expect(keys.verdict(authorization: nil, parameters: WireQuery()) == .missing)
        #expect(keys.refusal(authorization: nil, parameters: app, needs: .app) == nil)
        let refused = try #require(keys.refusal(authorization: nil, parameters: app, needs: .access))
        #expect(refused.statusCode == 403)
        #expect(refused.message.contains("the data API needs an access key and its secret (HTTP Basic); app keys search and track"))
        #expect(keys.refusal(authorization: basic, parameters: WireQuery(), needs: .access) == nil)
        #expect(keys.refusal(authorization: nil, parameters: WireQuery(), needs: .access)?.statusCode == 401)
        #expect(keys.refusal(authorization: nil, parameters: WireQuery(parsing: "access_key=nope"), needs: .app)?.statusCode == 401)
        // An open server checks nothing.
        #expect(ServerCredentials().refusal(authorization: nil, parameters: WireQuery(), needs: .access) == nil)
    }
}
