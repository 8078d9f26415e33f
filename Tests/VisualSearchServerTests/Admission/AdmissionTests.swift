import Foundation
import HTTPTypes
import Hummingbird
import Testing
@testable import VisualSearchServer

/// The pieces of admission on their own: the client table's token bucket and
/// slots, a lane's bounded queue, and which lane a request takes.
@Suite("Admission", .timeLimit(.minutes(1)))
struct AdmissionTests {
    @Test("the token bucket: a burst, then one request per 1/rate seconds, with the wait as Retry-After")
    func tokenBucket() {
        let limiter = ClientLimiter(limits: ClientLimits(requestsPerSecond: 2, burst: 3, maxConcurrent: 0))
        let start = ContinuousClock.now
        for _ in 0..<3 { #expect(limiter.admit("a", now: start) == .admitted) }
        #expect(limiter.admit("a", now: start) == .rateLimited(retryAfter: 1))
        #expect(limiter.admit("b", now: start) == .admitted, "another client has its own bucket")
        #expect(limiter.admit("a", now: start + .milliseconds(499)) == .rateLimited(retryAfter: 1))
        #expect(limiter.admit("a", now: start + .milliseconds(501)) == .admitted)
        // Refills never beyond the burst.
        for _ in 0..<3 { #expect(limiter.admit("a", now: start + .seconds(60)) == .admitted) }
        #expect(limiter.admit("a", now: start + .seconds(60)) != .admitted)
    }

    @Test("a slow rate says how long to wait: 0.1 r/s → 10 s")
    func retryAfter() {
        let limiter = ClientLimiter(limits: ClientLimits(requestsPerSecond: 0.1, burst: 1, maxConcurrent: 0))
        let now = ContinuousClock.now
        #expect(limiter.admit("a", now: now) == .admitted)
        #expect(limiter.admit("a", now: now) == .rateLimited(retryAfter: 10))
    }

    @Test("requests in flight per client, and image requests apart: the next is refused until one is released")
    func concurrency() {
        let limiter = ClientLimiter(limits: ClientLimits(requestsPerSecond: 0, burst: 1, maxConcurrent: 3, maxConcurrentImageRequests: 1))
        #expect(limiter.admit("a", lane: .image) == .admitted)
        #expect(limiter.admit("a", lane: .image) == .tooManyInFlight(limit: 1, lane: .image), "one image request at a time")
        #expect(limiter.admit("a") == .admitted)
        #expect(limiter.admit("a") == .admitted)
        #expect(limiter.admit("a") == .tooManyInFlight(limit: 3, lane: nil))
        limiter.release("a", lane: .image)
        #expect(limiter.admit("a", lane: .image) == .admitted)
    }

    @Test("a lane's queue: slots, then waiters in order, then shedding; a waiter past its time is shed")
    func queue() async throws {
        let queue = AdmissionQueue(limit: 1, maxQueued: 1, maxWait: .seconds(30))
        #expect(await queue.acquire())
        let waiter = Task { await queue.acquire() }
        for _ in 0..<200 where queue.counts.queued == 0 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(queue.counts == (1, 1))
        #expect(await queue.acquire() == false, "the queue is full")
        queue.release()
        #expect(await waiter.value, "the slot passed to the waiter")
        #expect(queue.counts == (1, 0))
        queue.release()
        #expect(queue.counts == (0, 0))

        let short = AdmissionQueue(limit: 1, maxQueued: 4, maxWait: .milliseconds(100))
        #expect(await short.acquire())
        let start = ContinuousClock.now
        #expect(await short.acquire() == false)
        #expect(start.duration(to: .now) >= .milliseconds(90))
        #expect(short.counts == (1, 0))
    }

    @Test("lanes: uploads and inserts are image requests; searches, thumbnails, originals, the collector and the page are light",
          arguments: [("/uploadsearch", RequestLane.image), ("/discoversearch", .image), ("/v1/product/search_by_image", .image),
                      ("/v1/visearch/search_by_image", .image), ("/insert", .image), ("/images/cat", .light),
                      ("/search", .light), ("/recommendations", .light),
                      ("/colorsearch", .light), ("/v3/events", .light), ("/", .light), ("/ui/app.js", .light)])
    func lanes(path: String, lane: RequestLane) {
        #expect(RequestLane(path: path) == lane)
    }

    @Test("body memory reserved: the declared length, the limit when chunked, nothing when over the limit or without a body")
    func bodyReservation() {
        typealias Middleware = AdmissionMiddleware<ServerContext>
        #expect(Middleware.bodyReservation(method: .post, declaredLength: 1000, maxBodyBytes: 16 << 20) == 1000)
        #expect(Middleware.bodyReservation(method: .post, declaredLength: nil, maxBodyBytes: 16 << 20) == 16 << 20)
        #expect(Middleware.bodyReservation(method: .post, declaredLength: 20 << 20, maxBodyBytes: 16 << 20) == 0)
        #expect(Middleware.bodyReservation(method: .get, declaredLength: nil, maxBodyBytes: 16 << 20) == 0)
    }

    @Test("who a client is: its key when keys are on, else the proxy's header when trusted, else the peer address")
    func identity() throws {
        func request(_ uri: String, _ headers: HTTPFields = [:]) -> Request {
            Request(head: HTTPRequest(method: .get, scheme: "http", authority: "x", path: uri, headerFields: headers), body: .init(buffer: .init()))
        }
        let plain = ClientLimits()
        #expect(ClientIdentity.key(of: request("/search?access_key=k1"), remoteAddress: "10.0.0.1", limits: plain, keyed: true) == "key:k1")
        #expect(ClientIdentity.key(of: request("/search?access_key=k1"), remoteAddress: "10.0.0.1", limits: plain, keyed: false) == "address:10.0.0.1")
        let basic = HTTPFields([HTTPField(name: .authorization, value: "Basic " + Data("ACCESS:SECRET".utf8).base64EncodedString())])
        #expect(ClientIdentity.key(of: request("/search", basic), remoteAddress: "10.0.0.1", limits: plain, keyed: true) == "key:ACCESS")
        let forwarded = HTTPFields([HTTPField(name: HTTPField.Name("X-Forwarded-For")!, value: "6.6.6.6, 203.0.113.9")])
        #expect(ClientIdentity.key(of: request("/search", forwarded), remoteAddress: "10.0.0.1", limits: plain, keyed: false) == "address:10.0.0.1",
                "the header is ignored unless trusted")
        var proxied = ClientLimits()
        proxied.addressHeader = "X-Forwarded-For"
        #expect(ClientIdentity.key(of: request("/search", forwarded), remoteAddress: "10.0.0.1", limits: proxied, keyed: false) == "address:203.0.113.9")
    }
}
