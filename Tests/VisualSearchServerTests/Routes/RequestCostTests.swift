import CatalogStores
import Foundation
import ImageOps
import SearchEngine
import SQLiteCatalog
import ConcurrencyToolkit
import TestSupport
import Testing
import VisualSearch
@testable import VisualSearchServer

/// Every cost a request can ask for is bounded by the server's own settings
/// (issue 37, items 2, 6, 7 and two smaller ones), on a real server over
/// loopback: results a page and paging depth, objects per discover search,
/// discover work that stops once its request is answered, multipart
/// boundaries, control characters in `im_name`, HEAD.
///
/// Nothing here measures time: the discover that outlives its deadline is
/// held by a hook until its 503 has arrived, then counted.
@Suite("Request costs", .timeLimit(.minutes(10)))
struct RequestCostTests {
    /// An upload as the SDKs send it, with `fields` as text parts (Java and JS send their parameters so).
    static func upload(_ bytes: [UInt8], fields: [(String, String)] = []) -> (body: [UInt8], headers: [(String, String)]) {
        var form = MultipartForm()
        for (name, value) in fields { form.append(field: name, value: value) }
        form.append(file: "image", filename: "image.jpeg", contentType: "image/jpeg", data: bytes)
        return (form.encoded, [("Content-Type", form.contentType)])
    }

    /// `path` (with its query string) on the running server.
    static func url(_ running: ServerFixture.Live, _ path: String) -> URL {
        URL(string: running.url.absoluteString + "/" + path)!
    }

    /// `count` different points inside a 451×300 image.
    static func points(_ count: Int) -> [(String, String)] {
        (0..<count).map { ("point", "\(10 + $0 % 400),\(10 + $0 / 400)") }
    }

    @Test("limit over --max-result-limit (100) is refused with 400 on every endpoint that takes one; 100 is answered")
    func resultLimit() async throws {
        try await ServerFixture.with { running in
            let (body, headers) = Self.upload(Repository.bytes("chelsea_cat.jpg"))
            let refused: [(path: String, body: [UInt8]?, name: String)] = [
                ("search?im_name=chelsea_cat&limit=101", nil, "limit"),
                ("recommendations?im_name=chelsea_cat&limit=1000", nil, "limit"),
                ("colorsearch?color=ff0000&limit=101", nil, "limit"),
                ("uploadsearch?limit=101", body, "limit"),
                ("discoversearch?result_limit=101", body, "result_limit"),
                ("discoversearch?limit=101", body, "limit"),
                ("v1/product/search_by_image?placement_id=1&limit=101", body, "limit"),
                ("v1/product/recommendations/chelsea_cat?placement_id=1&limit=101", nil, "limit"),
            ]
            for (path, upload, name) in refused {
                let reply = try await ServerFixture.reply(Self.url(running, path), method: upload == nil ? "GET" : "POST",
                                                          headers: upload == nil ? [] : headers, body: upload)
                #expect(reply.status == 400, "\(path)")
                let asked = path.contains("1000") ? 1000 : 101
                #expect(reply.text.contains("\(name) \(asked) is over this server's maximum 100"), "\(path): \(reply.text)")
            }
            let hundred = try await ServerFixture.reply(Self.url(running, "search?im_name=chelsea_cat&limit=100"))
            #expect(hundred.status == 200 && hundred.results.count == 100)
        }
    }

    @Test("page × limit deeper than --max-result-depth (1000) is refused with 400; the last page within it is answered")
    func pagingDepth() async throws {
        try await ServerFixture.with { running in
            let deepest = try await ServerFixture.reply(Self.url(running, "search?im_name=chelsea_cat&limit=100&page=10"))
            #expect(deepest.status == 200)
            for path in ["search?im_name=chelsea_cat&limit=100&page=11", "recommendations?im_name=chelsea_cat&limit=10&page=101",
                         "search?im_name=chelsea_cat&limit=10&page=9223372036854775807"] {
                let reply = try await ServerFixture.reply(Self.url(running, path))
                #expect(reply.status == 400, "\(path)")
                #expect(reply.errors.first?.hasPrefix("Invalid parameter page:") == true, "\(path): \(reply.text)")
                #expect(reply.text.contains("deeper than this server's maximum 1000"), "\(path)")
            }
        }
    }

    @Test("the limits are settings: --max-result-limit 5 refuses limit 6, --max-result-depth 20 refuses page 3 of 10")
    func limitSettings() async throws {
        try await ServerFixture.with({ $0.limits.queries = QueryLimits(maxResultLimit: 5, maxResultDepth: 20, maxDiscoverObjects: 2) }) { running in
            let six = try await ServerFixture.reply(Self.url(running, "search?im_name=chelsea_cat&limit=6"))
            #expect(six.status == 400 && six.text.contains("limit 6 is over this server's maximum 5"))
            let five = try await ServerFixture.reply(Self.url(running, "search?im_name=chelsea_cat&limit=5&page=4"))
            #expect(five.status == 200)
            let deep = try await ServerFixture.reply(Self.url(running, "search?im_name=chelsea_cat&limit=5&page=5"))
            #expect(deep.status == 400 && deep.text.contains("deeper than this server's maximum 20"))
            let (body, headers) = Self.upload(Repository.bytes("chelsea_cat.jpg"), fields: Self.points(2))
            let three = try await ServerFixture.reply(Self.url(running, "discoversearch?limit=1&box=0,0,50,50"),
                                                      method: "POST", headers: headers, body: body)
            #expect(three.status == 400 && three.text.contains("3 points and boxes are over this server's maximum 2"), "\(three.text)")
        }
    }

    @Test("a discover search with 1,200 points is refused with 400 naming the count before any image work; 30 are answered")
    func discoverPoints() async throws {
        try await ServerFixture.with { running in
            let (body, headers) = Self.upload(Repository.bytes("chelsea_cat.jpg"))
            let query = Self.points(1200).map { "\($0.0)=\($0.1)" }.joined(separator: "&")  // 15 kB of query string
            let many = try await ServerFixture.reply(Self.url(running, "discoversearch?limit=1&" + query), method: "POST", headers: headers, body: body)
            #expect(many.status == 400)
            #expect(many.errors == ["Invalid parameter point: 1200 points and boxes are over this server's maximum 30 objects per discover search"])
            // As 1,200 form fields, the body is refused for its parts before any point is read.
            let (fields, fieldHeaders) = Self.upload(Repository.bytes("chelsea_cat.jpg"), fields: Self.points(1200))
            let manyFields = try await ServerFixture.reply(Self.url(running, "discoversearch?limit=1"), method: "POST", headers: fieldHeaders, body: fields)
            #expect(manyFields.status == 400)
            #expect(manyFields.errors == ["Invalid parameter multipart: the body holds more than 1000 parts"])
            #expect(running.server.imageWork?.statistics.completed == 0)
            let (thirtyBody, thirtyHeaders) = Self.upload(Repository.bytes("chelsea_cat.jpg"), fields: Self.points(30))
            let thirty = try await ServerFixture.reply(Self.url(running, "discoversearch?limit=1"), method: "POST", headers: thirtyHeaders,
                                                       body: thirtyBody)
            #expect(thirty.status == 200)
            #expect((thirty.json["objects"] as? [Any])?.count == 30)
            // One decode for all 30 objects: one job on the image work pool.
            #expect(running.server.imageWork?.statistics.completed == 1)
        }
    }

    @Test("a discover search whose deadline passes stops describing its objects: 1 of 30, not 30")
    func discoverStopsAfterDeadline() async throws {
        let held = DispatchSemaphore(value: 0)
        let described = DescribedCount()
        let path = await Corpus.makeCatalog()
        var configuration = ServerConfiguration(catalog: .sqlite(path: path), port: 0)
        configuration.requestTimeout = 5  // a bound for reading the upload on a loaded machine: the hook holds the work past it anyway
        let opened = OpenedCatalog(sqlite: try await SQLiteCatalogStore(path: path))
        var engineConfiguration = VisualSearchServer<VisualSearchEngine>.engineConfiguration(for: configuration)
        // The first object is held until the client has its 503; every object described is counted.
        engineConfiguration.discoverProgress = { done, _ in
            described.count.withLock { $0 += 1 }
            if done == 1 { held.wait() }
        }
        let engine = try await opened.engine(configuration: engineConfiguration)
        let server = VisualSearchServer(configuration: configuration, engine: engine, store: opened.store,
                                        logger: ServerFixture.logger)
        let running = try await ServerFixture.live(server)
        do {
            let (body, headers) = Self.upload(Repository.bytes("chelsea_cat.jpg"), fields: Self.points(30))
            let reply = try await ServerFixture.reply(Self.url(running, "discoversearch?limit=1"), method: "POST", headers: headers, body: body)
            #expect(reply.status == 503)
            #expect(reply.errors.first?.hasPrefix("Request timed out") == true, "\(reply.text)")
            held.signal()
            let pool = try #require(server.imageWork)
            #expect(await pool.until { pool.statistics.completed == 1 && pool.statistics.running == 0 })
            #expect(described.count.withLock { $0 } == 1)
        } catch {
            held.signal()
            await running.stop()
            throw error
        }
        await running.stop()
    }

    @Test("a multipart boundary over RFC 2046's 70 characters is refused with 400 naming it")
    func longBoundary() async throws {
        try await ServerFixture.with { running in
            let boundary = String(repeating: "-", count: 200)
            let nearMisses = Array([[UInt8]](repeating: Array(String(repeating: "-", count: 199).utf8) + [88], count: 5_000).joined())
            let body = nearMisses + Array("\r\n--\(boundary)--\r\n".utf8)
            let reply = try await ServerFixture.reply(Self.url(running, "uploadsearch"), method: "POST",
                                                      headers: [("Content-Type", "multipart/form-data; boundary=\(boundary)")], body: body)
            #expect(reply.status == 400)
            #expect(reply.errors == ["Invalid parameter multipart: the boundary is 200 characters long; RFC 2046 allows at most 70"])
        }
    }

    @Test("a control character in im_name is 400 naming it, not 404, on /search, /recommendations and ProductSearch")
    func controlCharacterInName() async throws {
        try await ServerFixture.with { running in
            for path in ["search?im_name=chelsea%01cat", "recommendations?im_name=chelsea%00cat"] {
                let reply = try await ServerFixture.reply(Self.url(running, path))
                #expect(reply.status == 400, "\(path)")
                #expect(reply.errors.first?.hasPrefix("Invalid parameter im_name:") == true, "\(path): \(reply.text)")
                #expect(reply.text.contains("control character U+000"), "\(path)")
            }
            let product = try await ServerFixture.reply(Self.url(running, "v1/product/recommendations/chelsea%1Bcat?placement_id=1"))
            #expect(product.status == 400)
            let missing = try await ServerFixture.reply(Self.url(running, "search?im_name=no_such_image"))
            #expect(missing.status == 404)
        }
    }

    @Test("HEAD is answered like GET without a body on GET routes")
    func head() async throws {
        try await ServerFixture.with { running in
            for path in ["search?im_name=chelsea_cat", "health", "", "ui/app.js", "images/chelsea_cat", "metrics", "search?im_name=no_such_image"] {
                let url = Self.url(running, path)
                let get = try await ServerFixture.reply(url)
                let head = try await ServerFixture.reply(url, method: "HEAD")
                #expect(head.status == get.status, "\(path)")
                #expect(head.status != 404 || path.contains("no_such"), "\(path)")
                #expect(head.headers["content-type"] == get.headers["content-type"], "\(path)")
                #expect(head.body.isEmpty, "\(path)")
            }
        }
    }
}

/// Objects a discover search described, counted from the image work pool's thread.
final class DescribedCount: Sendable {
    let count = Locked(0)
}
