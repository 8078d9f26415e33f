import Foundation
import Logging
import Networking
import TestSupport
import Testing
import VisualSearch
@testable import VisualSearchServer

/// What issue 24's probing found in answers and logs, each on a real server
/// on loopback: names and values with control characters, too many filters,
/// server paths in answers, headers on every answer, HTTP/1.0, log lines a
/// client could forge.
@Suite("Request hygiene: names, filters, paths, headers, HTTP/1.0, log lines", .timeLimit(.minutes(10)))
struct RequestHygieneTests {
    static let form = [("Content-Type", "application/x-www-form-urlencoded")]

    @Test("a NUL in an inserted or removed name is a 400 naming the character; coffee_cup is neither overwritten nor removed")
    func nulInNames() async throws {
        try await ServerFixture.with({ $0.imageRoots = [Repository.images] }) { running in
            let source = "file://" + Repository.images + "/chelsea_cat.jpg"
            let cases: [(path: String, body: String, parameter: String)] = [
                ("insert", "im_name[0]=coffee_cup%00ignored&im_url[0]=\(WireQuery.escape(source))", "im_name[0]"),
                ("insert", "im_name[0]=cup2&im_url[0]=\(WireQuery.escape(source))&brand[0]=acme%01", "brand[0]"),
                ("insert", "im_name[0]=line%0Abreak&im_url[0]=\(WireQuery.escape(source))", "im_name[0]"),
                ("remove", "im_name[0]=coffee_cup%00whatever", "im_name[0]"),
            ]
            for (path, body, parameter) in cases {
                let reply = try await ServerFixture.reply(running.url.appending(path: path), method: "POST", headers: Self.form, body: Array(body.utf8))
                #expect(reply.status == 400, "\(path) \(body): \(reply.status) \(reply.text)")
                let message = reply.errors.joined()
                #expect(message.contains(parameter) && message.contains("control character U+00"), "\(message)")
            }
            #expect(running.server.service.runningInserts == 0, "a refused insert started a transaction")
            #expect(try await running.server.catalog.count() == 102)
            let cup = try await ServerFixture.reply(URL(string: "\(running.url)/search?" + "im_name=coffee_cup&limit=1")!)
            #expect(cup.status == 200 && cup.names == ["coffee_cup"])
        }
    }

    @Test("a NUL or control character in an fq value or an fl name is a 400 before any SQL")
    func controlCharactersInParameters() async throws {
        try await ServerFixture.with { running in
            for query in ["im_name=coffee_cup&fq=brand:nike%00x", "im_name=coffee_cup&fl=brand%1B"] {
                let reply = try await ServerFixture.reply(URL(string: "\(running.url)/search?" + query)!)
                #expect(reply.status == 400 && reply.errors.joined().contains("control character"), "\(query): \(reply.text)")
            }
        }
    }

    @Test("1,000 fq filters are a 400 naming the limit of 100, not a 500 from SQLite; 100 are answered")
    func filterCount() async throws {
        try await ServerFixture.with { running in
            let many = (0..<1000).map { _ in "fq=category:photo" }.joined(separator: "&")
            let refused = try await ServerFixture.reply(URL(string: "\(running.url)/search?" + "im_name=coffee_cup&" + many)!)
            #expect(refused.status == 400 && refused.errors.joined().contains("1000 filters") && refused.errors.joined().contains("100"),
                    "\(refused.status) \(refused.text.prefix(300))")
            let hundred = (0..<100).map { _ in "fq=category:photo" }.joined(separator: "&")
            let answered = try await ServerFixture.reply(URL(string: "\(running.url)/search?" + "im_name=coffee_cup&" + hundred)!)
            #expect(answered.status == 200, "\(answered.text.prefix(300))")
        }
    }

    @Test("ProductSearch's main_image_url is the image route, never a path on the server; the route serves it")
    func mainImageURL() async throws {
        try await ServerFixture.with { running in
            let client = ServerFixture.client(running.url)
            let found = try await client.productSearch(ProductSearchRequest(ImageQuery(.bytes(Repository.bytes("chelsea_cat.jpg")))))
            let recommended = try await client.productRecommendations(ProductRecommendationsRequest(productID: "chelsea_cat"))
            let products = (found.result ?? []) + (recommended.result ?? []) + [recommended.productInfo].compactMap { $0 }
            #expect(!products.isEmpty)
            for product in products {
                let url = product.mainImageURL ?? ""
                #expect(url == "/images/" + (product.productID.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(.init(charactersIn: "-_.!~*'()"))) ?? ""),
                        "\(product.productID): \(url)")
                #expect(!url.contains(Repository.root) && !url.contains("corpus"))
            }
            let served = try await ServerFixture.reply(running.url.appending(path: "images/chelsea_cat"))
            #expect(served.status == 200 && served.headers["content-type"] == "image/jpeg")
            let raw = try await ServerFixture.reply(running.url.appending(path: "v1/product/recommendations/chelsea_cat"))
            #expect(!raw.text.contains(Repository.root), "a server path in the raw answer")
        }
    }

    @Test("every answer has nosniff, 404s of unknown routes too; JSON answers are no-store; images keep their caching")
    func headers() async throws {
        try await ServerFixture.with { running in
            let unknown = try await ServerFixture.reply(running.url.appending(path: "no/such/route"))
            #expect(unknown.status == 404 && unknown.headers["x-content-type-options"] == "nosniff" && unknown.headers["cache-control"] == "no-store")
            let search = try await ServerFixture.reply(URL(string: "\(running.url)/search?" + "im_name=chelsea_cat")!)
            #expect(search.status == 200 && search.headers["cache-control"] == "no-store" && search.headers["x-content-type-options"] == "nosniff")
            let failed = try await ServerFixture.reply(URL(string: "\(running.url)/search?" + "im_name=nobody")!)
            #expect(failed.status == 404 && failed.headers["cache-control"] == "no-store")
            let image = try await ServerFixture.reply(running.url.appending(path: "images/chelsea_cat"))
            #expect(image.headers["cache-control"] == ImageRoutes.cacheControl && image.headers["x-content-type-options"] == "nosniff")
        }
    }

    @Test("HTTP/1.0 without keep-alive gets Connection: close and the connection is closed after the answer; with keep-alive it stays open")
    func http10() async throws {
        // A header timeout far beyond the socket's 30 s read timeout: a connection held open is seen as held, not closed by the timer.
        try await ServerFixture.with({ $0.limits.connections.headerTimeout = 600 }) { running in
            let port = try #require(running.url.port)
            let plain = try RawConnection(port: port)
            plain.write("GET /health HTTP/1.0\r\nHost: x\r\n\r\n")
            let answer = try #require(await plain.readResponse())
            #expect(answer.status == 200 && answer.headers["connection"]?.lowercased() == "close")
            #expect(await plain.closedByServer(), "the HTTP/1.0 connection was held open")

            let kept = try RawConnection(port: port)
            kept.write("GET /health HTTP/1.0\r\nHost: x\r\nConnection: keep-alive\r\n\r\n")
            let first = try #require(await kept.readResponse())
            #expect(first.status == 200 && first.headers["connection"]?.lowercased() == "keep-alive")
            kept.write("GET /health HTTP/1.0\r\nHost: x\r\n\r\n")
            let second = try #require(await kept.readResponse())
            #expect(second.status == 200 && second.headers["connection"]?.lowercased() == "close")
            #expect(await kept.closedByServer())

            let closing = try RawConnection(port: port)
            closing.write("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(await closing.readResponse()?.headers["connection"]?.lowercased() == "close")
            #expect(await closing.closedByServer())
        }
    }

    @Test("the text log quotes values: a path holding quotes and key=value cannot forge fields")
    func logfmtQuoting() {
        let handler = LogfmtLogHandler(label: "vsearch.serve") { _ in }
        let line = handler.line("request", level: .info, metadata: [
            "path": .string("/images/x\"status=200\"request_id=FORGED"), "request_id": .string("123"), "status": .stringConvertible(404),
            "note": .string("two\nlines"), "empty": .string(""),
        ], at: Date(timeIntervalSince1970: 0))
        #expect(line.hasSuffix(#" path="/images/x\"status=200\"request_id=FORGED" request_id=123 status=404"# + "\n"), "\(line)")
        #expect(line.contains(#" note="two\nlines""#) && line.contains(#" empty="""#))
        #expect(line.filter { $0 == "\n" }.count == 1)
        #expect(line.components(separatedBy: " request_id=").count == 2, "one request_id field: \(line)")
    }
}
