import Foundation
import Networking
import Synchronization
import TestSupport
import Testing

@Suite("HTTPClient: the retry matrix against a real loopback server", .timeLimit(.minutes(10)))
struct HTTPClientTests {
    /// The client's default attempts and ceilings, without jitter so waits are exact.
    static let exact = RetryPolicy(maxAttempts: 3, baseDelay: 0.5, maxDelay: 8, maxRetryAfter: 30, jitter: 0)

    func client(_ waits: RecordedWaits, retry: RetryPolicy = exact, timeout transport: URLSessionTransport = URLSessionTransport()) -> HTTPClient {
        HTTPClient(transport: transport, retry: retry, sleep: waits.sleep)
    }

    func send(_ client: HTTPClient, _ request: HTTPClientRequest, idempotent: Bool = true) async -> Result<HTTPClientResponse, HTTPClientError> {
        await outcome { () async throws(HTTPClientError) in try await client.send(request, idempotent: idempotent) }
    }

    @Test("connection refused: every attempt made, backing off between them, then the error")
    func refused() async throws {
        let waits = RecordedWaits()
        let url = URL(string: "http://127.0.0.1:\(LoopbackStub.closedPort())/search?access_key=SECRET")!
        let result = await send(client(waits), HTTPClientRequest(url: url))
        #expect(result.failure == .connectionRefused(url: "http://127.0.0.1:\(url.port ?? 0)/search?access_key=***"))
        #expect(waits.recorded == [0.5, 1])
    }

    @Test("429 with Retry-After in seconds: waits what the server asked, then succeeds")
    func retryAfterSeconds() async throws {
        let stub = LoopbackStub([.respond(429, headers: ["Retry-After": "2"], body: "{}"), .respond(200, body: "ok")])
        defer { stub.stop() }
        let waits = RecordedWaits()
        let result = await send(client(waits), HTTPClientRequest(url: stub.url(), timeout: 30))
        #expect(try result.get().status == 200)
        #expect(waits.recorded == [2])
        #expect(stub.requests.count == 2)
    }

    @Test("429 with Retry-After as an HTTP-date: waits until then")
    func retryAfterDate() async throws {
        let date = Self.imfFixdate(Date().addingTimeInterval(25))
        let stub = LoopbackStub([.respond(429, headers: ["Retry-After": date], body: "{}"), .respond(200, body: "ok")])
        defer { stub.stop() }
        let waits = RecordedWaits()
        let result = await send(client(waits), HTTPClientRequest(url: stub.url(), timeout: 30))
        #expect(try result.get().status == 200)
        let wait = try #require(waits.recorded.first)
        // Whole seconds, measured from when the header is read (a loaded machine may take a while to get there).
        #expect(waits.recorded.count == 1 && wait > 0 && wait <= 25, "waited \(wait) s for \(date)")
    }

    @Test("a Retry-After beyond the policy's limit ends the retries: the 429 is returned at once")
    func retryAfterTooLong() async throws {
        let stub = LoopbackStub([.respond(429, headers: ["Retry-After": "3600"], body: "{}")])
        defer { stub.stop() }
        let waits = RecordedWaits()
        #expect(try await send(client(waits), HTTPClientRequest(url: stub.url(), timeout: 30)).get().status == 429)
        #expect(waits.recorded.isEmpty && stub.requests.count == 1)
    }

    @Test("5xx is retried with backoff; once the attempts are spent the last answer is returned", arguments: [500, 502, 503, 504, 408])
    func serverErrors(status: Int) async throws {
        let stub = LoopbackStub([.respond(status, body: "{}")])
        defer { stub.stop() }
        let waits = RecordedWaits()
        #expect(try await send(client(waits), HTTPClientRequest(url: stub.url(), timeout: 30)).get().status == status)
        #expect(waits.recorded == [0.5, 1])
        #expect(stub.requests.count == 3)
    }

    @Test("5xx then 200: the success is returned")
    func recovers() async throws {
        let stub = LoopbackStub([.respond(503, body: "{}"), .respond(502, body: "{}"), .respond(200, body: "ok")])
        defer { stub.stop() }
        let waits = RecordedWaits()
        #expect(try await send(client(waits), HTTPClientRequest(url: stub.url(), timeout: 30)).get().body == Array("ok".utf8))
        #expect(waits.recorded == [0.5, 1])
    }

    @Test("4xx is final: returned at once for the caller to judge", arguments: [400, 401, 403, 404, 413, 422])
    func clientErrors(status: Int) async throws {
        let stub = LoopbackStub([.respond(status, body: "{\"error\":\"no\"}")])
        defer { stub.stop() }
        let waits = RecordedWaits()
        #expect(try await send(client(waits), HTTPClientRequest(url: stub.url(), timeout: 30)).get().status == status)
        #expect(waits.recorded.isEmpty && stub.requests.count == 1)
    }

    @Test("a body cut short is transient: tried again")
    func truncatedThenOK() async throws {
        let stub = LoopbackStub([.truncated(declared: 100, body: "{"), .respond(200, body: "ok")])
        defer { stub.stop() }
        let waits = RecordedWaits()
        #expect(try await send(client(waits), HTTPClientRequest(url: stub.url(), timeout: 30)).get().status == 200)
        #expect(stub.requests.count == 2 && waits.recorded == [0.5])
    }

    @Test("not idempotent: a refused connection is retried (the server never saw it)")
    func notIdempotentRefused() async throws {
        let waits = RecordedWaits()
        let url = URL(string: "http://127.0.0.1:\(LoopbackStub.closedPort())/insert")!
        let result = await send(client(waits), HTTPClientRequest(method: "POST", url: url, body: [1]), idempotent: false)
        #expect(result.failure == .connectionRefused(url: url.absoluteString))
        #expect(waits.recorded == [0.5, 1])
    }

    @Test("not idempotent: a 503 or a timeout is not retried (the server may have acted)")
    func notIdempotentSeen() async throws {
        let stub = LoopbackStub([.respond(503, body: "{}"), .stall])
        defer { stub.stop() }
        let waits = RecordedWaits()
        let http = client(waits)
        #expect(try await send(http, HTTPClientRequest(method: "POST", url: stub.url("/insert"), body: [1]), idempotent: false).get().status == 503)
        let result = await send(http, HTTPClientRequest(method: "POST", url: stub.url("/insert"), body: [1], timeout: 0.5), idempotent: false)
        #expect(result.failure == .timeout(url: stub.url("/insert").absoluteString, seconds: 0.5))
        #expect(waits.recorded.isEmpty && stub.requests.count == 2)
    }

    @Test("a stall is retried after each idle timeout, then the timeout is thrown")
    func stallRetried() async throws {
        let stub = LoopbackStub([.stall])
        defer { stub.stop() }
        let waits = RecordedWaits()
        let policy = RetryPolicy(maxAttempts: 2, baseDelay: 0.5, maxDelay: 8, maxRetryAfter: 30, jitter: 0)
        let result = await send(client(waits, retry: policy), HTTPClientRequest(url: stub.url(), timeout: 0.5))
        #expect(result.failure == .timeout(url: stub.url().absoluteString, seconds: 0.5))
        #expect(stub.requests.count == 2 && waits.recorded == [0.5])
    }

    @Test("cancelled during a backoff wait: .cancelled at once, no further attempt")
    func cancelledDuringBackoff() async throws {
        let stub = LoopbackStub([.respond(503, body: "{}")])
        defer { stub.stop() }
        let (sleeping, asleep) = AsyncStream<Void>.makeStream()
        let http = HTTPClient(transport: URLSessionTransport(), retry: .default) { seconds in
            asleep.yield()
            try await Task.sleep(for: .seconds(60))
        }
        let task = Task { await send(http, HTTPClientRequest(url: stub.url(), timeout: 30)) }
        var backoffs = sleeping.makeAsyncIterator()
        _ = await backoffs.next()  // the client is in its backoff wait
        task.cancel()
        // The backoff sleeps 60 s and the request may wait 30: answering at all means the cancellation ended it.
        let result = await task.value
        #expect(result.failure == .cancelled)
        #expect(stub.requests.count == 1)
    }

    @Test("the default sleep is cancellable")
    func defaultSleepCancellable() async throws {
        let task = Task { try await HTTPClient.defaultSleep(60) }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
    }

    @Test("fetch: the body of a 2xx")
    func fetch() async throws {
        let stub = LoopbackStub([.respond(200, headers: ["Content-Type": "image/jpeg"], body: "JPEGDATA")])
        defer { stub.stop() }
        #expect(try await HTTPClient(retry: .none).fetch(stub.url("/a.jpg")) == Array("JPEGDATA".utf8))
    }

    @Test("fetch: another status is a transport failure naming it")
    func fetchStatus() async throws {
        let stub = LoopbackStub([.respond(404, body: "{}")])
        defer { stub.stop() }
        let result = await outcome { () async throws(HTTPClientError) in try await HTTPClient(retry: .none).fetch(stub.url("/a.jpg?sig=S")) }
        #expect(result.failure == .transport(url: stub.url("/a.jpg?sig=***").absoluteString, reason: "HTTP 404"))
    }

    @Test("fetch: bounded by the transport it was made with")
    func fetchBounded() async throws {
        let stub = LoopbackStub([.oversizedChunked(bytes: 8 << 20)])
        defer { stub.stop() }
        let images = HTTPClient(transport: URLSessionTransport(maxResponseBytes: 64 << 10), retry: .none)
        let result = await outcome { () async throws(HTTPClientError) in try await images.fetch(stub.url()) }
        #expect(result.failure == .responseTooLarge(url: stub.url().absoluteString, limit: 64 << 10))
    }

    @Test("fetch: the destination policy applies to someone else's URL")
    func fetchRefused() async throws {
        let images = HTTPClient(transport: URLSessionTransport(destinationPolicy: .publicOnly), retry: .default)
        let result = await outcome { () async throws(HTTPClientError) in try await images.fetch(URL(string: "http://169.254.169.254/latest/meta-data/")!) }
        #expect(result.failure == .destinationRefused(url: "http://169.254.169.254/latest/meta-data/", reason: "169.254.169.254 is a link-local address"))
    }

    /// `Sun, 06 Nov 1994 08:49:37 GMT` for `date`.
    static func imfFixdate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}
