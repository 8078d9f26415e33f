import Foundation
import HummingbirdTesting
import TestSupport
import Testing
import VisualSearch
@testable import VisualSearchServer

/// Requests no SDK would send: each gets a 4xx with the API's error JSON,
/// never a 5xx, and the server keeps answering. In process (the router),
/// except where the socket is the point: bodies that are too large or stop
/// arriving, and the concurrency cap.
@Suite("Hostile requests", .timeLimit(.minutes(10)))
struct HostileRequestTests {
    @Test("invalid parameters: 400 with the ViSearch error shape naming the problem",
          arguments: [("search?im_name=chelsea_cat&page=0", "page"), ("search?im_name=chelsea_cat&fq=nope:1", "nope"),
                      ("search?im_name=chelsea_cat&limit=x", "limit"), ("colorsearch?color=zz00zz", "color"),
                      ("uploadsearch?im_id=1efad566233d148c4a7d7036c7505d9e.jpg&box=10,10,5,5", "box"),
                      ("search", "im_name"), ("uploadsearch", "image"), ("search?im_name=chelsea_cat&score=perhaps", "score"),
                      ("uploadsearch?im_url=ftp://x/y.jpg", "im_url"), ("discoversearch?im_id=x&point=1", "point"),
                      ("insert/status/not%20an%20id", "trans_id"), ("search?im_name=chelsea_cat&score_min=0.9&score_max=0.2", "score_min")])
    func invalidParameters(path: String, mentions: String) async throws {
        let server = try await ServerFixture.server()
        let reply = try await ServerFixture.router(server) { try await $0.send("/" + path) }
        #expect(reply.status == 400)
        #expect(reply.json["status"] as? String == "fail")
        #expect(reply.errors.count == 1)
        #expect(reply.errors.first?.contains(mentions) == true, "\(reply.errors)")
        #expect(reply.json["result"] as? [Any] != nil)
        let requestID = try #require(reply.json["reqid"] as? String)
        #expect(requestID.count == 19 && reply.headers["x-log-id"] == requestID)
    }

    @Test("an unknown im_name: 404 with the service's own message")
    func notFound() async throws {
        let server = try await ServerFixture.server()
        let reply = try await ServerFixture.router(server) { try await $0.send("/search?im_name=nothing_here") }
        #expect(reply.status == 404 && reply.errors == ["Image not found with im_name."])
    }

    @Test("an unknown path: 404 in the API family's error shape")
    func unknownPath() async throws {
        let server = try await ServerFixture.server()
        let (viSearch, product) = try await ServerFixture.router(server) { client in
            (try await client.send("/nowhere"), try await client.send("/v1/product/nowhere"))
        }
        #expect(viSearch.status == 404 && viSearch.errors.first?.contains("/nowhere") == true)
        #expect(product.status == 404 && (product.json["error"] as? [String: Any])?["code"] as? Int == 404)
    }

    // MARK: - Every file of badinput uploaded

    /// One row of `Tests/Fixtures/badinput/README.tsv`.
    struct BadInput: CustomTestStringConvertible, Sendable {
        var file: String
        var expected: String
        var testDescription: String { file }

        enum Outcome { case decodes, refused, either }

        /// What the table says a robust service does with the file.
        var outcome: Outcome {
            let text = expected.lowercased()
            if text.hasPrefix("decode correctly or reject") || text.contains("supported") { return .either }
            if text.hasPrefix("decode correctly") { return .decodes }
            if text.hasPrefix("reject") { return .refused }
            return .either
        }

        /// What a refusal's message must say, from the table's reason: one of these, lower-cased.
        var refusalMentions: [String] {
            let text = expected.lowercased()
            if text.contains("unsupported") { return ["unsupported format"] }
            if text.contains("pixel limit") { return ["exceeds the pixel limit", "exceeds the side limit"] }
            if text.contains("not an image") { return ["not an image vsearch reads"] }
            if text.contains("incomplete") { return ["truncated", "corrupt"] }
            // No reason given: any of the decoder's named problems.
            return ["truncated", "corrupt", "not an image vsearch reads", "unsupported format", "unusable size", "empty file",
                    "exceeds the", "send a multipart image part"]
        }

        static let all: [BadInput] = {
            guard let table = try? String(contentsOfFile: Repository.badInput + "/README.tsv", encoding: .utf8) else { return [] }
            return table.split(separator: "\n").dropFirst().compactMap { line in
                let columns = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
                return columns.count >= 4 ? BadInput(file: columns[0], expected: columns[3]) : nil
            }
        }()
    }

    @Test("the badinput table lists all 263 files, each present")
    func badInputTable() {
        #expect(BadInput.all.count == 263)
        for row in BadInput.all {
            #expect(FileManager.default.fileExists(atPath: Repository.badInput + "/" + row.file), "\(row.file)")
        }
    }

    @Test("each badinput file uploaded: 200 when the table says it decodes, 400 naming the problem when refused (413 beyond the server's image limits), never a 5xx",
          arguments: BadInput.all)
    func badInput(_ row: BadInput) async throws {
        let server = try await ServerFixture.server()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: Repository.badInput + "/" + row.file))
        var upload = MultipartForm()
        upload.append(file: "image", filename: "upload", contentType: "application/octet-stream", data: Array(bytes))
        let form = upload
        let (reply, health) = try await ServerFixture.router(server) { client in
            (try await client.post("/uploadsearch?limit=1", form: form), try await client.send("/health"))
        }
        let message = reply.errors.first ?? ""
        switch (row.outcome, reply.status) {
        case (.decodes, 200), (.either, 200):
            #expect(reply.json["status"] as? String == "OK")
            #expect(reply.names.count == 1, "a decoded upload finds its nearest catalog image")
        case (.refused, 413), (.either, 413):
            // Beyond the server's own image limits (32 MP), refused from the header.
            #expect(reply.json["status"] as? String == "fail")
            #expect(message.hasPrefix("Image too large: query image "), "\(message)")
            #expect(row.outcome == .refused || row.expected.lowercased().contains("limit") || row.expected.lowercased().contains("mpixel")
                    || row.expected.lowercased().contains("large"), "\(row.expected) → \(message)")
        case (.refused, 400), (.either, 400):
            #expect(reply.json["status"] as? String == "fail")
            if bytes.isEmpty {
                // An empty part is no image at all.
                #expect(message == "Invalid parameter image: send a multipart image part, im_url or im_id")
            } else {
                #expect(message.hasPrefix("Invalid image: query image: "), "\(message)")
            }
            #expect(row.refusalMentions.contains { message.lowercased().contains($0) }, "\(row.expected) → \(message)")
        default:
            Issue.record("\(row.expected): got HTTP \(reply.status) \(message)")
        }
        #expect(health.status == 200)
    }

    // MARK: - Bodies

    @Test("garbage multipart bodies: 400, server still answering",
          arguments: ["not multipart at all", "--B\r\nContent-Disposition: form-data\r\n\r\nx\r\n--B--",
                      "--B\r\nContent-Disposition: form-data; name=\"image\"\r\n\r\n\u{FF}\u{D8}"])
    func garbageMultipart(body: String) async throws {
        let server = try await ServerFixture.server()
        let (reply, health) = try await ServerFixture.router(server) { client in
            (try await client.send("/uploadsearch", method: .post, headers: [("Content-Type", "multipart/form-data; boundary=B")], body: Array(body.utf8)),
             try await client.send("/health"))
        }
        #expect(reply.status == 400 && reply.json["status"] as? String == "fail")
        #expect(reply.errors.count == 1)
        #expect(health.status == 200 && health.json["status"] as? String == "OK")
    }

    @Test("the Swift SDK's zero-part multipart body with im_id in the query works")
    func zeroPartBody() async throws {
        let server = try await ServerFixture.server()
        var image = MultipartForm()
        image.append(file: "image", filename: "image.jpeg", contentType: "image/jpeg", data: Repository.bytes("coffee_cup.jpg"))
        let upload = image
        let (first, again) = try await ServerFixture.router(server) { client in
            let first = try await client.post("/uploadsearch?limit=1", form: upload)
            let id = first.json["im_id"] as? String ?? ""
            return (first, try await client.post("/uploadsearch?im_id=\(id)&limit=1", form: MultipartForm()))
        }
        #expect(first.status == 200 && (first.json["im_id"] as? String)?.hasSuffix(".jpg") == true)
        #expect(again.status == 200 && again.names == ["coffee_cup"])
        #expect(again.json["im_id"] as? String == first.json["im_id"] as? String)
    }

    @Test("a body over the limit: 413 from Content-Length alone, before a byte of it is sent; the server keeps answering")
    func oversized() async throws {
        try await ServerFixture.with({ $0.maxBodyBytes = 1 << 20 }) { running in
            // Only the head: a server that waited for the 3 MiB body would never answer.
            let connection = try RawConnection(port: running.url.port ?? 0)
            connection.write("POST /uploadsearch HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=B\r\n"
                             + "Content-Length: \(3 << 20)\r\n\r\n")
            let answer = try #require(await connection.readResponse(), "no answer before the connection's read timeout")
            #expect(answer.status == 413)
            let json = try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any]
            #expect(json?["status"] as? String == "fail")
            #expect((json?["error"] as? [String])?.first == "Request body too large: the limit is 1048576 bytes")
            try await expectAnswering(running)
        }
    }

    @Test("a chunked body (no Content-Length) over the limit: 413 once the limit is passed, not after the whole body")
    func oversizedChunked() async throws {
        try await ServerFixture.with({ $0.maxBodyBytes = 1 << 20 }) { running in
            let connection = try RawConnection(port: running.url.port ?? 0)
            connection.write("POST /uploadsearch HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=B\r\n"
                             + "Transfer-Encoding: chunked\r\n\r\n")
            // 8 MiB in 64 KiB chunks, never terminated: the server must answer once it has counted past 1 MiB.
            let chunk = Array("10000\r\n".utf8) + [UInt8](repeating: 0x41, count: 0x10000) + Array("\r\n".utf8)
            // Written on a thread of its own while the answer is read: a server that stops reading must not hold the test up.
            let body = Array([[UInt8]](repeating: chunk, count: 128).joined())
            Task.detached { _ = await connection.write(bytes: body) }
            let answer = try #require(await connection.readResponse(), "no answer before the connection's read timeout")
            #expect(answer.status == 413)
            let json = try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any]
            #expect((json?["error"] as? [String])?.first == "Request body too large: the limit is 1048576 bytes")
            try await expectAnswering(running)
        }
    }

    // MARK: - Auth

    @Test("auth: wrong or missing credentials get 401 JSON; app key, Basic and ProductSearch app_key pass; /health needs none")
    func auth() async throws {
        let credentials = try ServerCredentials(lines: "app-1\nACCESS:SECRET")
        let server = try await ServerFixture.server { $0.credentials = credentials }
        try await ServerFixture.router(server) { client in
            let path = "/search?im_name=chelsea_cat&limit=1"
            let missing = try await client.send(path)
            #expect(missing.status == 401 && missing.errors.first?.hasPrefix("Missing credentials") == true)
            let wrong = try await client.send(path + "&access_key=nope")
            #expect(wrong.status == 401 && wrong.errors == ["Invalid access key"])
            #expect(try await client.send(path, headers: Self.basic("ACCESS:WRONG")).status == 401)
            #expect(try await client.send(path, headers: [("Authorization", "Bearer x")]).status == 401)
            #expect(try await client.send(path + "&access_key=app-1").status == 200)
            #expect(try await client.send(path, headers: Self.basic("ACCESS:SECRET")).status == 200)
            let product = try await client.send("/v1/product/recommendations/chelsea_cat?app_key=nope&placement_id=1")
            #expect(product.status == 401 && (product.json["error"] as? [String: Any])?["code"] as? Int == 401)
            #expect(try await client.send("/v1/product/recommendations/chelsea_cat?app_key=app-1&placement_id=1").status == 200)
            #expect(try await client.send("/health").status == 200)
        }
    }

    static func basic(_ pair: String) -> [(String, String)] {
        [("Authorization", "Basic " + Data(pair.utf8).base64EncodedString())]
    }

    // MARK: - Deadline and concurrency (real sockets: a body that stops arriving)

    /// Opens a connection and sends the head of an upload whose body stops after its first line.
    func stalledUpload(_ running: ServerFixture.Live) throws -> RawConnection {
        let connection = try RawConnection(port: running.url.port ?? 0)
        connection.write("POST /uploadsearch HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=B\r\n"
                         + "Content-Length: 100000\r\n\r\n--B\r\n")
        return connection
    }

    /// The server still serves: a /health answers 200. On a loaded machine /health itself can outlast a test's
    /// short request deadline (CI saw one take 6 s beside a 5-s deadline: 503 "timed out"); such an answer is
    /// the deadline working, so it is asked again, a few times, and only a timeout is forgiven.
    func expectAnswering(_ running: ServerFixture.Live) async throws {
        var health = try await ServerFixture.reply(running.url.appending(path: "health"))
        for _ in 0..<4 where health.status == 503 && health.errors.first?.hasPrefix("Request timed out") == true {
            health = try await ServerFixture.reply(running.url.appending(path: "health"))
        }
        #expect(health.status == 200 && health.json["status"] as? String == "OK")
    }

    @Test("the request deadline: a request whose body stops arriving gets 503 JSON saying it timed out")
    func deadline() async throws {
        // 5 s: long enough that the health check after it answers in time on a loaded machine (CI saw a
        // /health take 1.6 s beside two busy loops), short enough for the stalled upload to meet it.
        try await ServerFixture.with({ $0.requestTimeout = 5 }) { running in
            let connection = try stalledUpload(running)
            let answer = try #require(await connection.readResponse(), "no answer before the connection's read timeout")
            #expect(answer.status == 503)
            let json = try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any]
            #expect(json?["status"] as? String == "fail")
            #expect((json?["error"] as? [String])?.first == "Request timed out after 5.0 s")
            try await expectAnswering(running)
        }
    }

    @Test("more light requests in flight than the cap, with no queue: 503 with Retry-After, then normal service once the slot is free")
    func concurrencyCap() async throws {
        try await ServerFixture.with({ $0.maxConcurrentRequests = 1; $0.limits.maxQueuedRequests = 0; $0.requestTimeout = 5 }) { running in
            // The holder takes the only light slot: a collector batch whose body never finishes arriving, until its deadline.
            // It comes from another address: a client's own second request would be over its share (429), not shed.
            var holder = try stalledBatch(running)
            let search = running.url.appending(path: "search").appending(queryItems: [URLQueryItem(name: "im_name", value: "chelsea_cat")])
            // Until the server has read the holder's head, a search still gets the slot; ask until one is refused.
            // A search that got there first makes the holder itself the refused one: then hold the slot again.
            var refused: Reply?
            for _ in 0..<200 {
                if holder.hasAnswer { holder = try stalledBatch(running) }
                let reply = try await ServerFixture.reply(search)
                if reply.status != 200 { refused = reply; break }
            }
            let busy = try #require(refused, "no request was refused while the holder held the only slot")
            #expect(busy.status == 503 && busy.headers["retry-after"] == "2")
            #expect(busy.errors.first?.hasPrefix("Server busy: 1 light requests in flight and 0 waiting") == true, "\(busy.errors)")
            // The holder's own answer (its deadline) frees the slot before it is written.
            let held = try #require(await holder.readResponse())
            let message = (try JSONSerialization.jsonObject(with: Data(held.body)) as? [String: Any])?["error"] as? [String: Any]
            #expect(held.status == 503 && message?["message"] as? String == "Request timed out after 5.0 s", "\(String(describing: message))")
            #expect(try await ServerFixture.reply(search).status == 200)
        }
    }

    /// Opens a connection from 127.0.0.2 and sends the head of a collector batch whose body stops after its first byte.
    func stalledBatch(_ running: ServerFixture.Live) throws -> RawConnection {
        let connection = try RawConnection(port: running.url.port ?? 0, from: "127.0.0.2")
        connection.write("POST /v3/events?code=x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                         + "Content-Length: 100000\r\n\r\n{")
        return connection
    }
}

/// Parameters arrive wherever an SDK puts them (docs/wire-protocol.md §1.5).
@Suite("Parameter merging", .timeLimit(.minutes(10)))
struct ParameterMergingTests {
    @Test("Java: a form-urlencoded POST body")
    func formBody() async throws {
        let server = try await ServerFixture.server()
        let reply = try await ServerFixture.router(server) { client in
            try await client.send("/recommendations", method: .post, headers: [("Content-Type", "application/x-www-form-urlencoded")],
                                  body: Array("im_name=coffee_cup&limit=2&fl=brand&fq=category%3Afood".utf8))
        }
        #expect(reply.status == 200 && reply.results.count == 2)
        #expect(reply.results.allSatisfy { ($0["value_map"] as? [String: String])?["brand"] != nil })
    }

    @Test("Java/JS: multipart text parts beside the image; a body value overrides the query string")
    func multipartTextParts() async throws {
        let server = try await ServerFixture.server()
        var parts = MultipartForm()
        parts.append(field: "limit", value: "3")
        parts.append(field: "facets", value: "brand,category")
        parts.append(file: "image", filename: "photo.jpg", contentType: "image/jpeg", data: Repository.bytes("coffee_cup.jpg"))
        let form = parts
        let reply = try await ServerFixture.router(server) { try await $0.post("/uploadsearch?limit=9", form: form) }
        #expect(reply.status == 200 && reply.json["limit"] as? Int == 3 && reply.results.count == 3)
        #expect((reply.json["facets"] as? [[String: Any]])?.map { $0["key"] as? String } == ["brand", "category"])
    }

    @Test("Android: GET /uploadsearch with im_url only; ProductSearch with no body at all")
    func noBody() async throws {
        let server = try await ServerFixture.server { $0.imageRoots = [Repository.images] }
        let file = "file://" + Repository.images + "/coffee_cup.jpg"
        let (get, post) = try await ServerFixture.router(server) { client in
            (try await client.send("/uploadsearch?im_url=\(file)&limit=1"),
             try await client.send("/v1/product/search_by_image?app_key=a&placement_id=1&im_url=\(file)&limit=1", method: .post))
        }
        #expect(get.status == 200 && get.names == ["coffee_cup"])
        #expect(post.status == 200 && post.results.first?["product_id"] as? String == "coffee_cup")
    }

    @Test("Python and PHP: the singular /recommendation answers as /recommendations")
    func singularRecommendation() async throws {
        let server = try await ServerFixture.server()
        let (singular, plural) = try await ServerFixture.router(server) { client in
            (try await client.send("/recommendation?im_name=coffee_cup&limit=4&score=True"),
             try await client.send("/recommendations?im_name=coffee_cup&limit=4&score=true"))
        }
        #expect(singular.status == 200 && singular.names.count == 4)
        #expect(singular.names == plural.names && !singular.names.contains("coffee_cup"))
    }
}
