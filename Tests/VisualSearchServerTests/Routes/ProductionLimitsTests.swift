import Clocks
import Foundation
import ImageOps
import SearchEngine
import TestSupport
import Testing
import Tracking
import VisualSearch
@testable import VisualSearchServer
import EventDelivery

/// `vsearch serve` exposed to the network: each limit answers with its
/// documented status on a real server over loopback — 413 for images beyond
/// the pixel budget, 429 with `Retry-After` for a client over its rate or
/// concurrency, 503 with `Retry-After` when a lane's queue is full, closed
/// connections for slow clients and beyond the connection limit — and
/// `/metrics` counts what happened.
///
/// Nothing here depends on how fast the machine runs: the rate and the queue
/// wait keep time by a ``SteppedClock`` the test steps
/// (``ServerConfiguration/admissionClock``); a request that holds a slot holds
/// it until the test lets go; the connection timeouts are told by who closed
/// the connection and `/metrics`' reason, with only lower bounds on the wall clock.
@Suite("Production limits", .timeLimit(.minutes(10)))
struct ProductionLimitsTests {
    // MARK: - Images

    /// A PNG whose header declares `width`×`height` RGB and whose data is a
    /// few rows: what the decoder would allocate is the header's size.
    static func declaredPNG(width: Int, height: Int) throws -> [UInt8] {
        let small = try ImageEncoders.PNG().encode(PixelBuffer(width: 4, height: 4, hasAlpha: false, fill: (200, 30, 30, 255)))
        // IHDR is the first chunk: width and height at bytes 16…23; its CRC at 29…32 must be recomputed.
        var bytes = small
        func put(_ value: Int, at offset: Int) {
            for index in 0..<4 { bytes[offset + index] = UInt8((value >> (8 * (3 - index))) & 0xFF) }
        }
        put(width, at: 16)
        put(height, at: 20)
        put(Int(Self.crc32(bytes[12..<29])), at: 29)
        return bytes
    }

    /// PNG's CRC-32 (ISO 3309), bit by bit: a test needs no table.
    static func crc32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return crc ^ 0xFFFF_FFFF
    }

    static func upload(_ bytes: [UInt8]) -> (body: [UInt8], headers: [(String, String)]) {
        var form = MultipartForm()
        form.append(file: "image", filename: "upload", contentType: "application/octet-stream", data: bytes)
        return (form.encoded, [("Content-Type", form.contentType)])
    }

    @Test("an upload declaring 13000×13000 (169 MP, within the command line's limit): 413 before decoding, nothing allocated for it")
    func pixelBudget() async throws {
        try await ServerFixture.with { running in
            let bomb = try Self.declaredPNG(width: 13_000, height: 13_000)
            let (body, headers) = Self.upload(bomb)
            let reply = try await ServerFixture.reply(running.url.appending(path: "uploadsearch"), method: "POST", headers: headers, body: body)
            #expect(reply.status == 413)
            #expect(reply.json["status"] as? String == "fail")
            #expect(reply.errors == ["Image too large: query image declares 13000×13000 pixels, beyond this server's limit of 32 megapixels per image; send a smaller image"])
            // Refused from the header: the image work pool never ran a decode, so no pixel buffer was made.
            let statistics = try #require(running.server.imageWork?.statistics)
            #expect(statistics.completed == 0 && statistics.pixelsDecoded == 0)
            // The command line's limit is another: the same image passes the header check there.
            #expect(throws: Never.self) { _ = try FeaturePipeline(limits: .default).plan(bomb, box: nil) }
        }
    }

    @Test("the limit is a setting: 1 MP refuses a 1600×1200 JPEG with 413; a ProductSearch upload gets its own error shape")
    func pixelLimitSetting() async throws {
        let photo = try ImageEncoders.JPEG().encode(PixelBuffer(width: 1600, height: 1200, hasAlpha: false, fill: (40, 90, 160, 255)))
        try await ServerFixture.with({ $0.limits.image.maxPixels = 1_000_000 }) { running in
            let (body, headers) = Self.upload(photo)
            let viSearch = try await ServerFixture.reply(running.url.appending(path: "uploadsearch"), method: "POST", headers: headers, body: body)
            #expect(viSearch.status == 413 && viSearch.errors.first?.contains("limit of 1 megapixels") == true, "\(viSearch.errors)")
            let product = try await ServerFixture.reply(running.url.appending(path: "v1/product/search_by_image"), method: "POST",
                                                     headers: headers, body: body)
            let error = product.json["error"] as? [String: Any]
            #expect(product.status == 413 && error?["code"] as? Int == 413)
        }
    }

    @Test("a 4000×3000 JPEG upload is decoded with DCT scaling: the pool is charged 1/64 of its pixels")
    func dctScaledDecode() async throws {
        let photo = try ImageEncoders.JPEG().encode(PixelBuffer(width: 4000, height: 3000, hasAlpha: false, fill: (40, 90, 160, 255)))
        try await ServerFixture.with { running in
            let (body, headers) = Self.upload(photo)
            let reply = try await ServerFixture.reply(running.url.appending(path: "uploadsearch"), method: "POST", headers: headers, body: body)
            #expect(reply.status == 200)
            let statistics = try #require(running.server.imageWork?.statistics)
            #expect(statistics.completed == 1)
            #expect(statistics.pixelsDecoded == 500 * 375, "decoded \(statistics.pixelsDecoded) pixels of 12,000,000")
        }
    }

    // MARK: - Clients

    @Test("a client over its rate in a busy lane: 429 with Retry-After and the ViSearch error JSON; its bucket refills at the rate; another client is not affected")
    func rateLimit() async throws {
        let credentials = try ServerCredentials(lines: "shop-a\nshop-b\nshop-c")
        let clock = SteppedClock()
        try await ServerFixture.with({
            $0.credentials = credentials
            $0.admissionClock = clock  // time passes for the bucket only when the test advances it
            $0.limits.clients = ClientLimits(requestsPerSecond: 0.5, burst: 2)  // a token every 2 s of the clock
            $0.maxConcurrentRequests = 2
            Self.holdersOutlastTheRun(&$0)
        }) { running in
            // Another key holds one of the light lane's two slots: the lane is contended, so rates bind.
            let holder = try await Self.heldRequest(running, target: "/search?access_key=shop-c", lane: .light, from: "127.0.0.2")
            func search(_ key: String) async throws -> Reply {
                try await ServerFixture.reply(running.url.appending(path: "search").appending(queryItems: [
                    URLQueryItem(name: "im_name", value: "chelsea_cat"), URLQueryItem(name: "access_key", value: key)]))
            }
            #expect(try await search("shop-a").status == 200)
            #expect(try await search("shop-a").status == 200)
            let limited = try await search("shop-a")
            #expect(limited.status == 429)
            #expect(limited.json["status"] as? String == "fail")
            #expect(limited.errors.first?.hasPrefix("Too many requests: more than 0.5 requests a second (burst 2) from this client") == true,
                    "\(limited.errors)")
            #expect(limited.headers["retry-after"] == "2", "an empty bucket: a whole token, 2 s, to wait")
            // The bucket refills with the clock: half a token after 1 s (1 s more to wait), a whole one after 2 s.
            clock.step(by: .seconds(1))
            let sooner = try await search("shop-a")
            #expect(sooner.status == 429 && sooner.headers["retry-after"] == "1", "\(sooner.status) \(sooner.headers)")
            clock.step(by: .seconds(1))
            #expect(try await search("shop-a").status == 200)
            #expect(try await search("shop-a").status == 429, "its one token spent")
            // Keys are clients of their own.
            #expect(try await search("shop-b").status == 200)
            // Health is never limited: load balancers must see the server.
            for _ in 0..<5 { #expect(try await ServerFixture.reply(running.url.appending(path: "health")).status == 200) }
            withExtendedLifetime(holder) {}
        }
    }

    @Test("a client over its share of a busy lane: 429 while its request holds the slot; another address is served; served again once answered")
    func clientConcurrency() async throws {
        try await ServerFixture.with({ $0.maxConcurrentRequests = 2; Self.holdersOutlastTheRun(&$0) }) { running in
            // One of two light slots held by 127.0.0.1: the lane is contended and that client's share is 1.
            let holder = try await Self.heldRequest(running, target: "/search", lane: .light)
            let search = running.url.appending(path: "search").appending(queryItems: [URLQueryItem(name: "im_name", value: "chelsea_cat")])
            let refused = try await Self.firstRefusal(of: search, while: holder)
            #expect(refused.status == 429 && refused.headers["retry-after"] == "1")
            #expect(refused.errors.first?.contains("more than 1 requests at once from this client while the server is busy") == true, "\(refused.errors)")
            // Another client has a share of its own.
            let other = try await RawConnection.get("/search?im_name=chelsea_cat", port: running.url.port ?? 0, from: "127.0.0.2")
            #expect(other?.status == 200)
            try await Self.letGo(holder, running, lane: .light)
            #expect(try await ServerFixture.reply(search).status == 200)
        }
    }

    @Test("a client's image requests have a smaller share: its second upload is refused 429 while its searches go on")
    func clientImageConcurrency() async throws {
        try await ServerFixture.with({
            $0.limits.clients.maxConcurrentImageRequests = 1
            $0.limits.maxConcurrentImageRequests = 2  // one held upload makes the image lane contended
            Self.holdersOutlastTheRun(&$0)
        }) { running in
            let holder = try await Self.heldUpload(running)
            let uploadURL = running.url.appending(path: "uploadsearch")
            let upload = Self.upload(Repository.bytes("coffee_cup.jpg"))
            var refused: Reply?
            for _ in 0..<200 {
                let reply = try await ServerFixture.reply(uploadURL, method: "POST", headers: upload.headers, body: upload.body)
                if reply.status != 200 { refused = reply; break }
                try await Task.sleep(for: .milliseconds(10))
            }
            let limited = try #require(refused)
            #expect(limited.status == 429 && limited.errors.first?.contains("more than 1 image requests at once from this client while the server is busy") == true,
                    "\(limited.errors)")
            let search = try await ServerFixture.reply(running.url.appending(path: "search").appending(queryItems: [
                URLQueryItem(name: "im_name", value: "chelsea_cat")]))
            #expect(search.status == 200)
            withExtendedLifetime(holder) {}
        }
    }

    // MARK: - Lanes and shedding

    @Test("uploads beyond their lane's slots and queue: 503 with Retry-After, while searches by im_name are still answered")
    func imageLaneSheds() async throws {
        try await ServerFixture.with({
            $0.limits.maxConcurrentImageRequests = 1
            $0.limits.maxQueuedRequests = 0
            $0.limits.clients.maxConcurrent = 0
            $0.limits.clients.maxConcurrentImageRequests = 0
            Self.holdersOutlastTheRun(&$0)
        }) { running in
            let holder = try await Self.heldUpload(running, from: "127.0.0.2")
            let upload = Self.upload(Repository.bytes("coffee_cup.jpg"))
            let uploadURL = running.url.appending(path: "uploadsearch")
            var shed: Reply?
            for _ in 0..<200 {
                let reply = try await ServerFixture.reply(uploadURL, method: "POST", headers: upload.headers, body: upload.body)
                if reply.status == 503 { shed = reply; break }
                try await Task.sleep(for: .milliseconds(10))
            }
            let refused = try #require(shed, "no upload was shed while the holder held the only image slot")
            #expect(refused.errors.first?.hasPrefix("Server busy: 1 image requests in flight and 0 waiting (limits 1 and 0)") == true, "\(refused.errors)")
            #expect(refused.headers["retry-after"] == "2")
            // The light lane has slots of its own.
            let search = try await ServerFixture.reply(running.url.appending(path: "search").appending(queryItems: [
                URLQueryItem(name: "im_name", value: "chelsea_cat")]))
            #expect(search.status == 200)
            try await Self.letGo(holder, running, lane: .image)
            #expect(try await ServerFixture.reply(uploadURL, method: "POST", headers: upload.headers, body: upload.body).status == 200)
        }
    }

    @Test("a request that waits in its lane's queue longer than the queue timeout is shed with 503; short of it, it still waits")
    func queueTimeout() async throws {
        let clock = SteppedClock()
        try await ServerFixture.with({
            $0.admissionClock = clock  // the wait is counted on a clock the test advances
            $0.limits.maxConcurrentImageRequests = 1
            $0.limits.maxQueuedRequests = 4
            $0.limits.maxQueueWait = 5
            $0.limits.clients.maxConcurrent = 0
            $0.limits.clients.maxConcurrentImageRequests = 0
            Self.holdersOutlastTheRun(&$0)
        }) { running in
            let holder = try await Self.heldUpload(running, from: "127.0.0.2")
            let queue = try #require(running.server.admission.lanes[.image])
            let upload = Self.upload(Repository.bytes("coffee_cup.jpg"))
            let url = running.url.appending(path: "uploadsearch")
            let waiting = Task { try await ServerFixture.reply(url, method: "POST", headers: upload.headers, body: upload.body) }
            #expect(await queue.until { queue.counts.queued == 1 }, "the upload never queued behind the holder")
            // A second short of the queue timeout it still waits…
            clock.step(by: .seconds(4))
            try await Task.sleep(for: .milliseconds(100))  // room for a wrongly early shedding to show (can only hide a failure)
            #expect(queue.counts == (1, 1), "shed before its time in the queue ran out")
            // …and past it, it is shed: 503 with Retry-After (half the queue timeout) and its lane's message.
            clock.step(by: .milliseconds(1001))
            let reply = try await waiting.value
            #expect(reply.status == 503 && reply.headers["retry-after"] == "2", "\(reply.status) \(reply.headers)")
            // Issue 37: the message states the counts now, then the limits (it said "4 waiting", the queue's size, with one waiting).
            #expect(reply.errors.first?.hasPrefix("Server busy: 1 image requests in flight and 0 waiting (limits 1 and 4)") == true, "\(reply.errors)")
            #expect(queue.counts == (1, 0), "the holder still runs; nobody waits")
            withExtendedLifetime(holder) {}
        }
    }

    // MARK: - Slow clients and connections

    @Test("headers that drip: the connection is closed after the header timeout")
    func headerTimeout() async throws {
        try await ServerFixture.with({ $0.limits.connections.headerTimeout = 0.5 }) { running in
            let start = ContinuousClock.now
            // The read timeout only bounds a broken run: it is far below the 60 s idle timeout, the only other closer.
            let connection = try RawConnection(port: running.url.port ?? 0, readTimeout: 30)
            connection.write("GET /search?im_name=chel")
            #expect(await connection.closedByServer(), "the server answered, or left the connection open, instead of closing it")
            #expect(start.duration(to: .now) >= .milliseconds(500), "closed before the header timeout")
            try await Self.expectClosed(running, reason: "header_timeout")
            try await Self.expectAnswering(running)
        }
    }

    @Test("a body below the minimum rate: closed after the body timeout; a body at a normal pace is not")
    func bodyTimeout() async throws {
        try await ServerFixture.with({
            $0.limits.connections.bodyTimeout = 1
            $0.limits.connections.minBodyRate = 1 << 20
        }) { running in
            let start = ContinuousClock.now
            let dripping = try Self.stalledUpload(running)
            #expect(await dripping.closedByServer(), "the server answered, or left the connection open, instead of closing it")
            let elapsed = start.duration(to: .now)
            #expect(elapsed >= .milliseconds(900), "closed after \(elapsed), before the body timeout")
            try await Self.expectClosed(running, reason: "body_timeout")
            let upload = Self.upload(Repository.bytes("coffee_cup.jpg"))
            let reply = try await ServerFixture.reply(running.url.appending(path: "uploadsearch"), method: "POST", headers: upload.headers, body: upload.body)
            #expect(reply.status == 200)
        }
    }

    @Test("beyond the connection limit, none idle, a new connection's request is answered 503 and closed; once one closes, another is served")
    func connectionLimit() async throws {
        try await ServerFixture.with({
            $0.limits.connections.maxConnections = 2
            Self.holdersOutlastTheRun(&$0)
        }) { running in
            let port = running.url.port ?? 0
            // Busy (their bodies never come): an idle connection would be closed to make room for the third (ConnectionFloodTests).
            let stalled = "POST /search HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\n"
            var first: RawConnection? = try RawConnection(port: port)
            let second = try RawConnection(port: port)
            first?.write(stalled)
            second.write(stalled)
            #expect(await running.server.connections.until { running.server.connections.total == 2 },
                    "the server never counted the first two connections")
            #expect(await running.server.gate.until { running.server.gate.idleConnections == 0 }, "the first two connections never became busy")
            let third = try RawConnection(port: port)
            third.write("GET /search?im_name=chelsea_cat HTTP/1.1\r\nHost: x\r\n\r\n")
            let refused = try #require(await third.readResponse(), "no answer on the third connection")
            #expect(refused.status == 503 && refused.headers["retry-after"] == "1" && refused.headers["connection"] == "close")
            let errors = (try JSONSerialization.jsonObject(with: Data(refused.body)) as? [String: Any])?["error"] as? [String]
            #expect(errors == ["Server busy: more than 2 connections open; retry in 1 s"])
            first?.hangUp()
            first = nil
            #expect(await running.server.connections.until { running.server.connections.total == 1 }, "the closed connections are still counted")
            let fourth = try RawConnection(port: port)
            fourth.write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await fourth.readResponse()?.status == 200)
            withExtendedLifetime(second) {}
        }
    }

    @Test("beyond the connections one address may hold: 429, while the server still has connections for others")
    func clientConnectionLimit() async throws {
        try await ServerFixture.with({ $0.limits.connections.maxConnectionsPerClient = 2 }) { running in
            let port = running.url.port ?? 0
            let held = try (0..<2).map { _ in try RawConnection(port: port) }
            #expect(await running.server.connections.until { running.server.connections.total == 2 }, "the server never counted the first two connections")
            let third = try RawConnection(port: port)
            third.write("GET /v1/product/recommendations/chelsea_cat HTTP/1.1\r\nHost: x\r\n\r\n")
            let refused = try #require(await third.readResponse(), "no answer on the third connection")
            #expect(refused.status == 429 && refused.headers["retry-after"] == "1")
            let error = (try JSONSerialization.jsonObject(with: Data(refused.body)) as? [String: Any])?["error"] as? [String: Any]
            #expect(error?["code"] as? Int == 429, "ProductSearch's error shape")
            withExtendedLifetime(held) {}
        }
    }

    @Test("a connection over the per-address limit that never sends its request is closed by the header timeout")
    func refusedConnectionTimesOut() async throws {
        try await ServerFixture.with({
            $0.limits.connections.maxConnectionsPerClient = 1
            $0.limits.connections.headerTimeout = 0.5
            $0.limits.connections.bodyTimeout = 600
        }) { running in
            let port = running.url.port ?? 0
            // The first connection sends its head and waits with its body: the body's long timeout keeps it open
            // (a silent one would itself be closed after 0.5 s, perhaps before a loaded test process looks).
            let first = try RawConnection(port: port)
            first.write("POST /search HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\n")
            #expect(await running.server.connections.until { running.server.connections.total == 1 }, "the server never counted the first connection")
            let start = ContinuousClock.now
            let silent = try RawConnection(port: port)  // its read timeout (30 s) is far below the 60 s idle timeout
            #expect(await silent.closedByServer(), "the silent connection got an answer, or was left open")
            #expect(start.duration(to: .now) >= .milliseconds(500), "closed before the header timeout")
            withExtendedLifetime(first) {}
        }
    }

    // MARK: - Metrics

    @Test("/metrics after a known sequence: requests by endpoint and status, refusals, decoded pixels, catalog size, collector events")
    func metrics() async throws {
        try await ServerFixture.with({
            $0.admissionClock = TestClock()  // never advanced: the bucket does not refill, however long the run (a loaded CI took 55 s)
            $0.limits.clients = ClientLimits(requestsPerSecond: 1, burst: 6)
            $0.maxConcurrentRequests = 2
            Self.holdersOutlastTheRun(&$0)
        }) { running in
            let url = running.url
            // Another address holds one of the two light slots, so the lane is contended and light requests spend tokens.
            let holder = try await Self.heldRequest(running, target: "/v3/events?code=x", lane: .light, from: "127.0.0.2")
            func search(_ name: String) async throws -> Int {
                try await ServerFixture.reply(url.appending(path: "search").appending(queryItems: [URLQueryItem(name: "im_name", value: name)])).status
            }
            #expect(try await search("chelsea_cat") == 200)
            #expect(try await search("coffee_cup") == 200)
            #expect(try await search("no_such_image") == 404)
            let upload = Self.upload(Repository.bytes("coffee_cup.jpg"))
            #expect(try await ServerFixture.reply(url.appending(path: "uploadsearch"), method: "POST", headers: upload.headers, body: upload.body).status == 200)
            let bomb = Self.upload(try Self.declaredPNG(width: 13_000, height: 13_000))
            #expect(try await ServerFixture.reply(url.appending(path: "uploadsearch"), method: "POST", headers: bomb.headers, body: bomb.body).status == 413)
            let transport = HTTPEventTransport(endpoint: .custom(url), code: "dev")
            let events = (1...2).map { TrackingEvent.productView(queryId: "q", pid: "p\($0)", imgUrl: "https://shop.example/p.jpg", pos: $0) }
            #expect(await transport.send(events, uid: nil) == .results([.accepted, .accepted]))
            #expect(try await ServerFixture.reply(url.appending(path: "v3/__va.gif").appending(queryItems: [
                URLQueryItem(name: "code", value: "dev"), URLQueryItem(name: "pid", value: "p")])).status == 400)
            #expect(try await search("chelsea_cat") == 200)  // the 6th token: 4 searches and 2 collector requests (uploads are in the image lane, not contended)
            #expect(try await search("chelsea_cat") == 429)  // none left

            let text = try await ServerFixture.reply(url.appending(path: "metrics")).text
            let values = Self.samples(text)
            #expect(values[#"vsearch_http_requests_total{endpoint="/search",status="200"}"#] == 3)
            #expect(values[#"vsearch_http_requests_total{endpoint="/search",status="404"}"#] == 1)
            #expect(values[#"vsearch_http_requests_total{endpoint="/search",status="429"}"#] == 1)
            #expect(values[#"vsearch_http_requests_total{endpoint="/uploadsearch",status="200"}"#] == 1)
            #expect(values[#"vsearch_http_requests_total{endpoint="/uploadsearch",status="413"}"#] == 1)
            #expect(values[#"vsearch_http_requests_total{endpoint="/v3/events",status="200"}"#] == 1)
            #expect(values[#"vsearch_http_requests_total{endpoint="/v3/__va.gif",status="400"}"#] == 1)
            #expect(values[#"vsearch_http_request_duration_seconds_count{endpoint="/search"}"#] == 5)
            #expect(values[#"vsearch_http_requests_rate_limited_total{reason="rate"}"#] == 1)
            #expect(values[#"vsearch_collector_events_total{outcome="accepted"}"#] == 2)
            #expect(values[#"vsearch_collector_events_total{outcome="rejected"}"#] == 1)
            #expect(values["vsearch_image_decodes_total"] == 1)
            #expect((values["vsearch_image_decoded_pixels_total"] ?? 0) > 0)
            #expect(values["vsearch_catalog_images"] == 102)
            #expect(values[#"vsearch_http_requests_in_flight{lane="image"}"#] == 0)
            #expect(values[#"vsearch_http_requests_in_flight{lane="light"}"#] == 1, "the holder")
            #expect(values[#"vsearch_http_requests_queued{lane="light"}"#] == 0)
            #expect(values["vsearch_connections_open"] != nil)
            #expect(text.contains("# TYPE vsearch_http_request_duration_seconds histogram"))
            #expect(text.contains(#"vsearch_http_request_duration_seconds_bucket{endpoint="/search",le="+Inf"} 5"#))
            withExtendedLifetime(holder) {}
        }
    }

    @Test("/metrics asks for the keys when the server has keys, and is gone with servesMetrics off")
    func metricsProtected() async throws {
        let credentials = try ServerCredentials(lines: "ops-key")
        try await ServerFixture.with({ $0.credentials = credentials }) { running in
            let metrics = running.url.appending(path: "metrics")
            #expect(try await ServerFixture.reply(metrics).status == 401)
            let allowed = try await ServerFixture.reply(metrics.appending(queryItems: [URLQueryItem(name: "access_key", value: "ops-key")]))
            #expect(allowed.status == 200 && allowed.headers["content-type"]?.hasPrefix("text/plain; version=0.0.4") == true)
        }
        try await ServerFixture.with({ $0.servesMetrics = false }) { running in
            let status = try await ServerFixture.reply(running.url.appending(path: "metrics")).status
            #expect(status == 404)
        }
    }

    // MARK: - Helpers

    /// `name{labels} value` lines of a Prometheus text page, by `name{labels}`.
    static func samples(_ text: String) -> [String: Double] {
        var values: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            values[String(line[..<space])] = value
        }
        return values
    }

    /// Opens a connection from `source` and sends the head of an upload whose body stops after its first line.
    static func stalledUpload(_ running: ServerFixture.Live, target: String = "/uploadsearch", from source: String = "127.0.0.1") throws
        -> RawConnection {
        let connection = try RawConnection(port: running.url.port ?? 0, from: source)
        connection.write("POST \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=B\r\n"
                         + "Content-Length: 100000\r\n\r\n--B\r\n")
        return connection
    }

    /// A stalled upload, once the server holds it in flight in the image lane (so a request sent after it cannot overtake it).
    static func heldUpload(_ running: ServerFixture.Live, from source: String = "127.0.0.1") async throws -> RawConnection {
        try await heldRequest(running, target: "/uploadsearch", lane: .image, from: source)
    }

    /// A stalled POST to `target` from `source`, once the server holds it in flight in `lane`.
    static func heldRequest(_ running: ServerFixture.Live, target: String, lane: RequestLane, from source: String = "127.0.0.1") async throws
        -> RawConnection {
        let slots = try #require(running.server.admission.lanes[lane], "no \(lane) lane")
        let before = slots.counts.running
        let holder = try stalledUpload(running, target: target, from: source)
        #expect(await slots.until { slots.counts.running > before }, "the stalled request never got its slot")
        #expect(running.server.admission.lanes[lane]?.counts.running == before + 1, "the stalled request never got its slot")
        return holder
    }

    /// A held request keeps its slot until the test lets go (``letGo(_:_:lane:)``), however slow the run: neither the
    /// request timeout nor the body timeout answers it first.
    static func holdersOutlastTheRun(_ configuration: inout ServerConfiguration) {
        configuration.requestTimeout = 600
        configuration.limits.connections.bodyTimeout = 600
    }

    /// Hangs up a held request and waits until the server has given its slot in `lane` back.
    static func letGo(_ holder: RawConnection, _ running: ServerFixture.Live, lane: RequestLane) async throws {
        let slots = try #require(running.server.admission.lanes[lane], "no \(lane) lane")
        let before = slots.counts.running
        holder.hangUp()
        #expect(await slots.until { slots.counts.running < before }, "the slot was not given back")
    }

    /// `/metrics` counts a connection the server closed for `reason`.
    static func expectClosed(_ running: ServerFixture.Live, reason: String) async throws {
        let text = try await ServerFixture.reply(running.url.appending(path: "metrics")).text
        #expect(samples(text)[#"vsearch_connections_closed_total{reason="\#(reason)"}"#] == 1, "\(text)")
    }

    /// Asks `url` until an answer is not 200 (the holder's head may not be read yet at first).
    static func firstRefusal(of url: URL, while holder: RawConnection) async throws -> Reply {
        for _ in 0..<200 {
            let reply = try await ServerFixture.reply(url)
            if reply.status != 200 { return reply }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw RawConnection.Failure(description: "every request was answered 200 while the holder held its slot")
    }

    static func expectAnswering(_ running: ServerFixture.Live) async throws {
        #expect(try await ServerFixture.reply(running.url.appending(path: "health")).status == 200)
    }
}
