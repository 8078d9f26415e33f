import Foundation
import TestSupport
import Testing
import VisualSearch
@testable import VisualSearchServer

/// Admission as an attacker meets it (issue 24), on a real server over
/// loopback, with the attacker at 127.0.0.2 and the client it must not hurt
/// at 127.0.0.1: keyless bodies cannot take the memory uploads need, a
/// made-up or wrong key is its sender's address, every spelling of an upload
/// path is an image request, and a client that keeps to one request at a
/// time is never refused while the server has room.
@Suite("Admission on loopback", .timeLimit(.minutes(5)))
struct AdmissionOnLoopbackTests {
    static let attacker = "127.0.0.2"

    /// Opens a connection from `source` and sends a POST head to `target` that declares `length` body bytes, and no body.
    static func head(_ running: ServerFixture.Live, _ target: String, length: Int, from source: String = attacker,
                     headers: String = "Content-Type: multipart/form-data; boundary=B\r\n") throws -> RawConnection {
        let connection = try RawConnection(port: running.url.port ?? 0, from: source)
        connection.write("POST \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(headers)Content-Length: \(length)\r\n\r\n")
        return connection
    }

    /// Waits (``eventually(within:_:)``: a bound, not a measurement) until `count` of `connections` have an answer;
    /// returns how many have one.
    static func answered(_ connections: [RawConnection], atLeast count: Int) async throws -> Int {
        _ = await eventually { connections.filter(\.hasAnswer).count >= count }
        return connections.filter(\.hasAnswer).count
    }

    /// Requests in flight in both lanes.
    static func inFlight(_ running: ServerFixture.Live) -> Int {
        running.server.admission.lanes.values.reduce(0) { $0 + $1.counts.running }
    }

    static func upload(_ url: URL, key: String? = nil, authorization: String? = nil) async throws -> Reply {
        var form = MultipartForm()
        form.append(file: "image", filename: "upload", contentType: "application/octet-stream", data: Repository.bytes("coffee_cup.jpg"))
        var target = url.appending(path: "uploadsearch")
        if let key { target = target.appending(queryItems: [URLQueryItem(name: "access_key", value: key)]) }
        var headers = [("Content-Type", form.contentType)]
        if let authorization { headers.append(("Authorization", authorization)) }
        return try await ServerFixture.reply(target, method: "POST", headers: headers, body: form.encoded)
    }

    // MARK: - 1. Body memory

    @Test("#1: 16 keyless collector posts declaring 16 MiB each get 413 at once (the collector's 1 MiB cap); an upload with a key is served")
    func keylessCollectorCannotTakeBodyMemory() async throws {
        let credentials = try ServerCredentials(lines: "shop-a")
        try await ServerFixture.with({ $0.credentials = credentials; $0.limits.clients.refusalDelay = 0 }) { running in
            let flood = try (0..<16).map { _ in
                try Self.head(running, "/v3/events?code=x", length: 16 << 20, headers: "Content-Type: application/json\r\n")
            }
            #expect(try await Self.answered(flood, atLeast: 16) == 16, "the collector's bodies were held instead of refused")
            let upload = try await Self.upload(running.url, key: "shop-a")
            #expect(upload.status == 200, "\(upload.status) \(upload.errors)")
            let refused = try #require(await flood[0].readResponse())
            #expect(refused.status == 413)
            let message = (try JSONSerialization.jsonObject(with: Data(refused.body)) as? [String: Any])?["error"] as? [String: Any]
            #expect((message?["message"] as? String)?.contains("the limit is 1048576 bytes") == true, "\(String(describing: message))")
        }
    }

    @Test("#1, #2: 16 uploads with made-up keys declaring 16 MiB from one address hold at most its quarter of the body budget; an upload with a key is served")
    func madeUpKeysCannotTakeBodyMemory() async throws {
        let credentials = try ServerCredentials(lines: "shop-a")
        try await ServerFixture.with({ $0.credentials = credentials; $0.limits.clients.refusalDelay = 0 }) { running in
            let flood = try (0..<16).map { index in try Self.head(running, "/uploadsearch?access_key=fake\(index)", length: 16 << 20) }
            #expect(try await Self.answered(flood, atLeast: 12) == 12, "64 MiB of 256 reserved, the other 12 refused")
            let upload = try await Self.upload(running.url, key: "shop-a")
            #expect(upload.status == 200, "\(upload.status) \(upload.errors)")
            for connection in flood where connection.hasAnswer {
                let answer = try #require(await connection.readResponse())
                let errors = (try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any])?["error"] as? [String]
                #expect(answer.status == 429 && errors?.first?.contains("more than 64 MiB of request bodies at once from this client") == true,
                        "\(answer.status) \(String(describing: errors))")
            }
        }
    }

    @Test("#1, #3: on an open server, 16 uploads to /uploadsearch/ declaring 16 MiB from one address hold at most a quarter; another address uploads")
    func openServerSlashUploadsCannotTakeBodyMemory() async throws {
        try await ServerFixture.with({ $0.limits.clients.refusalDelay = 0 }) { running in
            let flood = try (0..<16).map { _ in try Self.head(running, "/uploadsearch/", length: 16 << 20) }
            #expect(try await Self.answered(flood, atLeast: 12) == 12)
            #expect(running.server.admission.lanes[.image]?.counts.running == 4, "the flood's uploads are image requests")
            let upload = try await Self.upload(running.url)
            #expect(upload.status == 200, "\(upload.status) \(upload.errors)")
        }
    }

    // MARK: - 2. Identity

    @Test("#2: slow-body searches with made-up keys from one address get at most its share of the light lane; the valid key is served")
    func madeUpKeysShareTheirAddress() async throws {
        let credentials = try ServerCredentials(lines: "shop-a")
        try await ServerFixture.with({
            $0.credentials = credentials
            $0.maxConcurrentRequests = 8
            $0.limits.maxQueueWait = 0.5
            $0.limits.clients.refusalDelay = 0
        }) { running in
            let flood = try (0..<8).map { index in
                try Self.head(running, "/search?access_key=fake\(index)", length: 1000, headers: "Content-Type: application/x-www-form-urlencoded\r\n")
            }
            let refused = try await Self.answered(flood, atLeast: 4)
            #expect(refused >= 3, "one address may hold about half the lane; \(8 - refused) held")
            let search = try await ServerFixture.reply(running.url.appending(path: "search").appending(queryItems: [
                URLQueryItem(name: "im_name", value: "chelsea_cat"), URLQueryItem(name: "access_key", value: "shop-a")]))
            #expect(search.status == 200, "\(search.status) \(search.errors)")
            for connection in flood where connection.hasAnswer {
                #expect(await connection.readResponse()?.status == 429)
            }
        }
    }

    @Test("#2: requests with a wrong Basic secret are their address, not the access key: they do not spend the key's share")
    func wrongSecretIsNotTheKey() async throws {
        let credentials = try ServerCredentials(lines: "ACCESS:SECRET")
        func basic(_ pair: String) -> String { "Basic " + Data(pair.utf8).base64EncodedString() }
        try await ServerFixture.with({
            $0.credentials = credentials
            $0.maxConcurrentRequests = 8
            $0.limits.clients.maxConcurrent = 2
            $0.limits.clients.refusalDelay = 0
        }) { running in
            let flood = try (0..<4).map { _ in
                try Self.head(running, "/search", length: 1000,
                              headers: "Authorization: \(basic("ACCESS:wrong"))\r\nContent-Type: application/x-www-form-urlencoded\r\n")
            }
            #expect(await eventually { (running.server.admission.lanes[.light]?.counts.running ?? 0) >= 4 }, "the wrong secrets never took their slots")
            let search = try await ServerFixture.reply(running.url.appending(path: "search").appending(queryItems: [
                URLQueryItem(name: "im_name", value: "chelsea_cat")]), headers: [("Authorization", basic("ACCESS:SECRET"))])
            #expect(search.status == 200, "\(search.status) \(search.errors)")
            withExtendedLifetime(flood) {}
        }
    }

    // MARK: - 3. Lanes

    @Test("#3: every spelling of an upload path the router accepts is admitted as an image request")
    func slashesDoNotEscapeTheImageLane() async throws {
        try await ServerFixture.with { running in
            let paths = ["/uploadsearch/", "//uploadsearch", "/uploadsearch//", "/discoversearch/", "/v1/product/search_by_image/"]
            var held: [RawConnection] = []
            for (index, path) in paths.enumerated() {
                held.append(try Self.head(running, path, length: 100_000, from: "127.0.0.1"))
                _ = await eventually { Self.inFlight(running) >= index + 1 }
                #expect(running.server.admission.lanes[.image]?.counts.running == index + 1, "\(path) was not admitted as an image request")
            }
            #expect(running.server.admission.lanes[.light]?.counts.running == 0)
            let metrics = try await ServerFixture.reply(running.url.appending(path: "metrics")).text
            #expect(metrics.contains(#"vsearch_http_requests_in_flight{lane="image"} 5"#), "\(metrics)")
            withExtendedLifetime(held) {}
        }
    }

    // MARK: - 11. Fair share

    @Test("#11: 1,000 sequential searches, one in flight, as fast as loopback answers, on an idle server with the default limits: none refused")
    func politeClientIsNeverRefused() async throws {
        // The refusal delay only makes a refusal slow to arrive; with it off, the old limiter's 429s came back at once.
        try await ServerFixture.with({ $0.limits.clients.refusalDelay = 0 }) { running in
            let search = running.url.appending(path: "search").appending(queryItems: [URLQueryItem(name: "im_name", value: "chelsea_cat")])
            var statuses: [Int: Int] = [:]
            for _ in 0..<1000 { statuses[try await ServerFixture.reply(search).status, default: 0] += 1 }
            #expect(statuses == [200: 1000])
        }
    }
}
