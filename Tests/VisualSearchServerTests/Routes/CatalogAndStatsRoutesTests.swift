import Foundation
import TestSupport
import Testing
import Tracking
import VisualSearch
@testable import VisualSearchServer

/// `/catalog` (fields and names, for the page's browser and facets) and
/// `/v3/stats` (the analytics page's numbers): their answers and their keys.
@Suite("Catalog and stats routes", .timeLimit(.minutes(10)))
struct CatalogAndStatsRoutesTests {
    @Test("/catalog gives the image count, every declared field with its type, and names page by page in name order")
    func catalog() async throws {
        let server = try await ServerFixture.server()
        let (first, second, all) = try await ServerFixture.router(server) { client in
            (try await client.send("/catalog?limit=5"), try await client.send("/catalog?limit=5&page=2"),
             try await client.send("/catalog?limit=1000"))
        }
        #expect(first.status == 200 && first.json["images"] as? Int == 102)
        let fields = try #require(first.json["fields"] as? [[String: String]])
        let types = Dictionary(uniqueKeysWithValues: fields.map { ($0["name"]!, $0["type"]!) })
        #expect(types["brand"] == "string" && types["price"] == "float" && types["description"] == "text" && types["count"] == "int")
        #expect(fields.map { $0["name"]! } == fields.map { $0["name"]! }.sorted())
        #expect(first.names.count == 5 && second.names.count == 5 && Set(first.names).isDisjoint(with: second.names))
        #expect(all.names.count == 102 && all.names == all.names.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
        #expect(first.names + second.names == Array(all.names.prefix(10)))
    }

    @Test("/catalog refuses a page or limit that is not a whole number in range, naming it")
    func catalogParameters() async throws {
        let server = try await ServerFixture.server()
        let replies = try await ServerFixture.router(server) { client in
            [try await client.send("/catalog?page=0"), try await client.send("/catalog?limit=abc"), try await client.send("/catalog?limit=5000")]
        }
        #expect(replies.allSatisfy { $0.status == 400 })
        #expect(replies[0].errors.first?.contains("page") == true && replies[1].errors.first?.contains("limit") == true)
    }

    @Test("with keys, /catalog and /v3/stats need one (401 without), while the page, images and the collector stay open")
    func keys() async throws {
        let server = try await ServerFixture.server { $0.credentials = try! ServerCredentials(lines: "pagekey") }
        let replies = try await ServerFixture.router(server) { client in
            [try await client.send("/catalog"), try await client.send("/v3/stats"),
             try await client.send("/catalog?access_key=pagekey"), try await client.send("/v3/stats?access_key=pagekey"),
             try await client.send("/"), try await client.send("/images/chelsea_cat?size=400")]
        }
        #expect(replies[0].status == 401 && replies[1].status == 401)
        #expect(replies[2].status == 200 && replies[3].status == 200)
        #expect(replies[4].status == 200 && replies[5].status == 200)
    }

    @Test("/v3/stats: the events stats plus a timeline in buckets, since a window; a bad window is 400 naming the forms")
    func stats() async throws {
        let catalog = await Corpus.makeCatalog()
        let server = try await ServerFixture.server(catalog: catalog)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        var events: [TrackingEvent] = []
        for (index, pid) in ["chelsea_cat", "coffee_cup", "chelsea_cat"].enumerated() {
            var view = TrackingEvent.productView(queryId: "q1", pid: pid, imgUrl: "/images/\(pid)", pos: index + 1)
            view.timestamp = now - 1000
            view.eventID = "v\(index)"
            events.append(view)
        }
        var click = TrackingEvent.productClick(queryId: "q1", pid: "chelsea_cat", imgUrl: "/images/chelsea_cat", pos: 1)
        click.timestamp = now - 500
        click.eventID = "c1"
        var old = click
        old.eventID = "c0"
        old.timestamp = now - 10 * 86_400_000
        events += [click, old]
        _ = try await server.collector.receive(events)
        let (day, all, bad) = try await ServerFixture.router(server) { client in
            (try await client.send("/v3/stats?since=24h&bucket=3600"), try await client.send("/v3/stats?since=all&bucket=86400"),
             try await client.send("/v3/stats?since=yesterday"))
        }
        #expect(day.status == 200 && day.json["total"] as? Int == 4)
        #expect(day.json["actions"] as? [String: Int] == ["product_view": 3, "product_click": 1])
        let products = try #require(day.json["products"] as? [[String: Any]])
        #expect(products.first?["key"] as? String == "chelsea_cat" && products.first?["clicks"] as? Int == 1 && products.first?["ctr"] as? Double == 0.5)
        #expect(day.json["bucket_seconds"] as? Int == 3600)
        let buckets = try #require(day.json["timeline"] as? [[String: Any]])
        var counted = 0
        for bucket in buckets { counted += (bucket["counts"] as? [String: Int] ?? [:]).values.reduce(0, +) }
        #expect(counted == 4)
        #expect(all.json["total"] as? Int == 5 && (all.json["timeline"] as? [[String: Any]])?.count == 2)
        #expect(bad.status == 400 && bad.json["status"] as? String == "fail")
    }
}
