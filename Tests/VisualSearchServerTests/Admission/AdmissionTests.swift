import Foundation
import HTTPTypes
import Hummingbird
import TestSupport
import Testing
import VisualSearch
@testable import VisualSearchServer
import ConcurrencyToolkit

/// The pieces of admission on their own: the client table's token bucket and
/// shares, a lane's bounded queue, which lane a request takes, who a client
/// is and the body budget. Time is a ``SteppedClock`` the test steps: nothing
/// here waits on the wall clock. (swift-clocks' `TestClock` yields through
/// background-priority tasks on every advance; in a busy test process those ran
/// last, and three of these tests hit their minute's limit in CI.)
@Suite("Admission", .timeLimit(.minutes(10)))
struct AdmissionTests {
    /// A limiter whose lanes (64 slots each) are contended: another client holds half the slots.
    static func busy(_ limits: ClientLimits, clock: any Clock<Duration> = SteppedClock()) -> ClientLimiter {
        let limiter = ClientLimiter(limits: limits, clock: ElapsedClock(clock))
        for lane in RequestLane.allCases {
            for _ in 0..<32 { _ = limiter.admit("other", lane: lane, slots: 64) }
        }
        return limiter
    }

    @Test("in a busy lane, the token bucket: a burst, then one request per 1/rate seconds, with the wait as Retry-After")
    func tokenBucket() async {
        let clock = SteppedClock()
        let limiter = Self.busy(ClientLimits(requestsPerSecond: 2, burst: 3, maxConcurrent: 0), clock: clock)
        for _ in 0..<3 { #expect(limiter.admit("a", slots: 64) == .admitted) }
        #expect(limiter.admit("a", slots: 64) == .rateLimited(retryAfter: 1))
        #expect(limiter.admit("b", slots: 64) == .admitted, "another client has its own bucket")
        clock.step(by: .milliseconds(499))
        #expect(limiter.admit("a", slots: 64) == .rateLimited(retryAfter: 1))
        clock.step(by: .milliseconds(2))
        #expect(limiter.admit("a", slots: 64) == .admitted)
        // Refills never beyond the burst.
        clock.step(by: .seconds(60))
        for _ in 0..<3 { #expect(limiter.admit("a", slots: 64) == .admitted) }
        #expect(limiter.admit("a", slots: 64) != .admitted)
    }

    @Test("a slow rate says how long to wait: 0.1 r/s → 10 s")
    func retryAfter() {
        let limiter = Self.busy(ClientLimits(requestsPerSecond: 0.1, burst: 1, maxConcurrent: 0))
        #expect(limiter.admit("a", slots: 64) == .admitted)
        #expect(limiter.admit("a", slots: 64) == .rateLimited(retryAfter: 10))
    }

    @Test("in a busy lane, requests in flight per client, and image requests apart: the next is refused until one is released")
    func concurrency() {
        let limiter = Self.busy(ClientLimits(requestsPerSecond: 0, burst: 1, maxConcurrent: 3, maxConcurrentImageRequests: 1))
        #expect(limiter.admit("a", lane: .image, slots: 64) == .admitted)
        #expect(limiter.admit("a", lane: .image, slots: 64) == .tooManyInFlight(limit: 1, lane: .image), "one image request at a time")
        #expect(limiter.admit("a", slots: 64) == .admitted)
        #expect(limiter.admit("a", slots: 64) == .admitted)
        #expect(limiter.admit("a", slots: 64) == .tooManyInFlight(limit: 3, lane: nil))
        limiter.release("a", lane: .image)
        #expect(limiter.admit("a", lane: .image, slots: 64) == .admitted)
    }

    @Test("issue 24: a polite client on an idle server — 1,000 sequential requests at 54 a second — is never refused with the default limits")
    func politeClient() async {
        let clock = SteppedClock()  // a thousand instants: stepped without yielding
        let limiter = ClientLimiter(limits: ClientLimits(), clock: ElapsedClock(clock))
        var refused = 0
        for index in 0..<1000 {
            clock.step(to: .microseconds(Int64(index) * 1_000_000 / 54))
            // One in flight at a time: its own request is all the lane holds.
            if limiter.admit("address:127.0.0.1", slots: 64) == .admitted {
                limiter.release("address:127.0.0.1")
            } else {
                refused += 1
            }
        }
        #expect(refused == 0)
        // Nor a client far faster, or with many requests at once, while the lane has room.
        for _ in 0..<32 { #expect(limiter.admit("address:127.0.0.2", slots: 64) == .admitted) }
    }

    @Test("a client that keeps sending what is refused (400, 413) is limited even in a free lane; others and the refill are not affected")
    func refusalsAreLimited() async {
        let clock = SteppedClock()
        let limiter = ClientLimiter(limits: ClientLimits(requestsPerSecond: 50, burst: 100), clock: ElapsedClock(clock))
        // A pixel-bomb sender: each bomb admitted (the image lane is free) and then refused with 413 — ten at once
        // (the refusal burst), far below the 100 its request bucket allows.
        for _ in 0..<10 {
            #expect(limiter.admit("bomber", lane: .image, slots: 16) == .admitted)
            limiter.release("bomber", lane: .image)
            limiter.recordRefusal("bomber")
        }
        #expect(limiter.admit("bomber", lane: .image, slots: 16) == .refusedTooOften(retryAfter: 1))
        #expect(limiter.admit("bomber", lane: .light, slots: 64) == .refusedTooOften(retryAfter: 1), "in every lane")
        #expect(limiter.admit("polite", lane: .image, slots: 16) == .admitted, "another client is not touched")
        limiter.release("polite", lane: .image)
        // At 5 refusals a second, a token comes back after 200 ms: one more request goes on.
        clock.step(by: .milliseconds(150))
        #expect(limiter.admit("bomber", lane: .image, slots: 16) == .refusedTooOften(retryAfter: 1))
        clock.step(by: .milliseconds(50))
        #expect(limiter.admit("bomber", lane: .image, slots: 16) == .admitted)
    }

    @Test("issue 24: in a contended lane a client keeps to its fair share, with room kept for a newcomer; its slots given back, it is admitted again")
    func fairShare() async {
        let clock = SteppedClock()
        let limiter = ClientLimiter(limits: ClientLimits(requestsPerSecond: 0, maxConcurrent: 0, maxConcurrentImageRequests: 0),
                                    clock: ElapsedClock(clock))
        // A lane of 8: the flooder takes half while it is free…
        for _ in 0..<4 { #expect(limiter.admit("flooder", slots: 8) == .admitted) }
        // …and then, alone in a contended lane, its share is 8 / (1 + 1) = 4: it has them.
        #expect(limiter.admit("flooder", slots: 8) == .tooManyInFlight(limit: 4, lane: nil))
        // A newcomer is admitted: its share is 8 / (1 other + 2) = 2.
        #expect(limiter.admit("newcomer", slots: 8) == .admitted)
        #expect(limiter.admit("newcomer", slots: 8) == .admitted)
        #expect(limiter.admit("newcomer", slots: 8) == .tooManyInFlight(limit: 2, lane: nil))
        // Once the flooder gives a slot back it may take it again, not more.
        limiter.release("flooder")
        #expect(limiter.admit("flooder", slots: 8) == .tooManyInFlight(limit: 2, lane: nil), "now 8 / (1 other + 2) = 2")
        // The image lane counts apart, with the configured cap.
        let capped = ClientLimiter(limits: ClientLimits(maxConcurrentImageRequests: 1), clock: ElapsedClock(clock))
        for _ in 0..<8 { _ = capped.admit("other", lane: .image, slots: 16) }
        #expect(capped.admit("a", lane: .image, slots: 16) == .admitted)
        #expect(capped.admit("a", lane: .image, slots: 16) == .tooManyInFlight(limit: 1, lane: .image))
        capped.release("a", lane: .image)
        #expect(capped.admit("a", lane: .image, slots: 16) == .admitted)
        // A flood of sequential requests in a contended lane still meets the rate: 100 of burst, then 50 a second.
        let floodClock = SteppedClock()  // a thousand instants: stepped without yielding
        let rated = Self.busy(ClientLimits(), clock: floodClock)
        var admitted = 0
        for index in 0..<1000 {
            floodClock.step(to: .milliseconds(Int64(index)))
            guard rated.admit("f", slots: 64) == .admitted else { continue }
            admitted += 1
            rated.release("f")
        }
        #expect(admitted == 100 + 49 || admitted == 100 + 50, "admitted \(admitted) in 1 s")
    }

    @Test("issue 37: with the processors busy, a client keeps to its share of the searches while another searches; alone again, it does not")
    func processorShare() async {
        let clock = SteppedClock()
        // Two processors; a lane of 64 slots, never half full here: only the share of the processors binds.
        let limiter = ClientLimiter(limits: ClientLimits(requestsPerSecond: 0, maxConcurrent: 16, searchProcessors: 2), clock: ElapsedClock(clock))
        // Alone, a client may have eight expensive searches in flight: there is nobody to be fair to.
        for _ in 0..<8 { #expect(limiter.admit("flooder", slots: 64, search: true) == .admitted) }
        // Another client searches: admitted (a newcomer always is), and from now on the flooder has half of two processors.
        #expect(limiter.admit("victim", slots: 64, search: true) == .admitted)
        #expect(limiter.admit("flooder", slots: 64, search: true) == .tooManyInFlight(limit: 1, lane: nil))
        #expect(limiter.admit("flooder", slots: 64) == .admitted, "what is not a search (a thumbnail, the page) is not held back")
        limiter.release("flooder")
        // Its searches ending one by one, it gets no new one until it is down to its share.
        for _ in 0..<7 { limiter.release("flooder", search: true) }
        #expect(limiter.admit("flooder", slots: 64, search: true) == .tooManyInFlight(limit: 1, lane: nil))
        limiter.release("flooder", search: true)
        #expect(limiter.admit("flooder", slots: 64, search: true) == .admitted)
        #expect(limiter.admit("flooder", slots: 64, search: true) == .tooManyInFlight(limit: 1, lane: nil))
        // The victim's search answered, it counts as searching for a second: the flooder is still held to its share
        // (its second search goes on — one search in flight does not make the processors busy — its third not).
        limiter.release("victim", search: true)
        clock.step(by: .milliseconds(900))
        #expect(limiter.admit("flooder", slots: 64, search: true) == .admitted)
        #expect(limiter.admit("flooder", slots: 64, search: true) == .tooManyInFlight(limit: 1, lane: nil))
        // Gone for longer, the flooder is alone again: only the lane's limits.
        clock.step(by: .milliseconds(200))
        for _ in 0..<14 { #expect(limiter.admit("flooder", slots: 64, search: true) == .admitted) }
    }

    @Test("a lane's queue: slots, then waiters in order, then shedding; a waiter past its time on the queue's clock is shed, not before")
    func queue() async throws {
        let clock = SteppedClock()
        let queue = AdmissionQueue(limit: 1, maxQueued: 1, maxWait: .seconds(30), clock: ElapsedClock(clock))
        #expect(await queue.acquire())
        let waiter = Task { await queue.acquire() }
        #expect(await queue.until { queue.counts.queued == 1 })
        #expect(queue.counts == (1, 1))
        #expect(await queue.acquire() == false, "the queue is full")
        queue.release()
        #expect(await waiter.value, "the slot passed to the waiter")
        #expect(queue.counts == (1, 0))
        queue.release()
        #expect(queue.counts == (0, 0))

        let short = AdmissionQueue(limit: 1, maxQueued: 4, maxWait: .seconds(5), clock: ElapsedClock(clock))
        #expect(await short.acquire())
        let late = Task { await short.acquire() }
        #expect(await short.until { short.counts.queued == 1 })
        // Its wait is counted on the queue's clock: a second short of the limit it still waits…
        clock.step(by: .seconds(4))
        try await Task.sleep(for: .milliseconds(50))  // room for a wrongly early shedding to show (can only hide a failure)
        #expect(short.counts == (1, 1), "shed before its time ran out")
        // …and past it, it is shed. (Strictly past: a timer that starts sleeping only now still wakes.)
        clock.step(by: .milliseconds(1001))
        #expect(await late.value == false)
        #expect(short.counts == (1, 0))
    }

    @Test("lanes: uploads and inserts are image requests; searches, thumbnails, originals, the collector and the page are light",
          arguments: [("/uploadsearch", RequestLane.image), ("/discoversearch", .image), ("/v1/product/search_by_image", .image),
                      ("/v1/visearch/search_by_image", .image), ("/insert", .image), ("/images/cat", .light),
                      ("/search", .light), ("/recommendations", .light),
                      ("/colorsearch", .light), ("/v3/events", .light), ("/", .light), ("/ui/app.js", .light),
                      // Issue 24: the router drops empty segments, and so does the lane.
                      ("/uploadsearch/", .image), ("//uploadsearch", .image), ("/uploadsearch//", .image), ("/discoversearch/", .image),
                      ("/v1/product/search_by_image/", .image), ("//v1//product/search_by_image", .image), ("/insert/", .image)])
    func lanes(path: String, lane: RequestLane) {
        #expect(RequestLane(path: path) == lane)
    }

    @Test("a path as the router matches it: empty segments dropped", arguments: [
        ("/uploadsearch", "/uploadsearch"), ("/uploadsearch/", "/uploadsearch"), ("//uploadsearch", "/uploadsearch"),
        ("/v1//product/search_by_image/", "/v1/product/search_by_image"), ("/", "/"), ("//", "/"), ("/images/a/b", "/images/a/b"),
    ])
    func normalizedPath(path: String, normalized: String) {
        #expect(RoutePath.normalized(path) == normalized)
        #expect(RoutePath.family(of: "//v1/product/search_by_image") == .productSearch)
        #expect(RoutePath.method(of: "/v1//product/search_by_image/") == "product/search_by_image")
    }

    @Test("body memory reserved: the declared length, the limit when chunked, nothing when over the limit or without a body")
    func bodyReservation() {
        typealias Middleware = AdmissionMiddleware<ServerContext>
        #expect(Middleware.bodyReservation(method: .post, declaredLength: 1000, maxBodyBytes: 16 << 20) == 1000)
        #expect(Middleware.bodyReservation(method: .post, declaredLength: nil, maxBodyBytes: 16 << 20) == 16 << 20)
        #expect(Middleware.bodyReservation(method: .post, declaredLength: 20 << 20, maxBodyBytes: 16 << 20) == 0)
        #expect(Middleware.bodyReservation(method: .get, declaredLength: nil, maxBodyBytes: 16 << 20) == 0)
        // The collector has a cap of its own: a declared 16 MiB batch reserves nothing (the route answers 413 unread).
        #expect(Middleware.bodyLimit(path: "/v3/events", maxBodyBytes: 16 << 20) == 1 << 20)
        #expect(Middleware.bodyLimit(path: "/uploadsearch", maxBodyBytes: 16 << 20) == 16 << 20)
        #expect(Middleware.bodyReservation(method: .post, declaredLength: 16 << 20,
                                           maxBodyBytes: Middleware.bodyLimit(path: "/v3/events", maxBodyBytes: 16 << 20)) == 0)
    }

    @Test("the body budget: a quarter per client (429), a quarter for requests without a verified key (503), then the whole (503)")
    func bodyBudget() {
        let budget = BodyBudget(limit: 64)
        let keyless = (0..<3).map { ClientIdentity(key: "address:10.0.0.\($0)", authenticated: false) }
        let shop = ClientIdentity(key: "key:shop", authenticated: true), other = ClientIdentity(key: "key:other", authenticated: true)
        #expect(budget.reserve(10, for: keyless[0]) == nil)
        #expect(budget.reserve(10, for: keyless[0]) == .clientShare(limit: 16), "a client holds at most a quarter")
        #expect(budget.reserve(6, for: keyless[1]) == nil)
        #expect(budget.reserve(1, for: keyless[2]) == .unauthenticatedShare(limit: 16), "keyless requests hold at most a quarter in all")
        #expect(budget.reserve(16, for: shop) == nil, "a verified key still has room")
        #expect(budget.reserve(16, for: other) == nil)
        #expect(budget.reserve(17, for: ClientIdentity(key: "key:third", authenticated: true)) == .full(limit: 64))
        budget.release(10, for: keyless[0])
        budget.release(6, for: keyless[1])
        #expect(budget.reserve(16, for: keyless[2]) == nil)
        #expect(budget.reserved == 48)
        // One body larger than a share on its own still fits when nothing else holds it.
        #expect(BodyBudget(limit: 8).reserve(5, for: shop) == nil)
    }

    @Test("who a client is: its key once verified (app key, or Basic with the right secret), else its address; a proxy's header when trusted")
    func identity() throws {
        func request(_ uri: String, _ headers: HTTPFields = [:]) -> Request {
            Request(head: HTTPRequest(method: .get, scheme: "http", authority: "x", path: uri, headerFields: headers), body: .init(buffer: .init()))
        }
        func basic(_ pair: String) -> HTTPFields {
            HTTPFields([HTTPField(name: .authorization, value: "Basic " + Data(pair.utf8).base64EncodedString())])
        }
        let plain = ClientLimits()
        let keys = try ServerCredentials(lines: "k1\nACCESS:SECRET"), open = ServerCredentials()
        func identity(_ request: Request, _ credentials: ServerCredentials, limits: ClientLimits = plain) -> ClientIdentity {
            ClientIdentity(of: request, remoteAddress: "10.0.0.1", limits: limits, credentials: credentials)
        }
        // Issue 37: an app key is a client per key and address (it ships inside apps); an access key is one client.
        #expect(identity(request("/search?access_key=k1"), keys) == ClientIdentity(key: "key:k1@10.0.0.1", authenticated: true))
        #expect(identity(request("/search?app_key=k1"), keys) == ClientIdentity(key: "key:k1@10.0.0.1", authenticated: true))
        #expect(identity(request("/search", basic("ACCESS:SECRET")), keys) == ClientIdentity(key: "key:ACCESS", authenticated: true))
        // Issue 24: a claimed key is not an identity until verified.
        #expect(identity(request("/search?access_key=fake1"), keys) == ClientIdentity(key: "address:10.0.0.1", authenticated: false))
        #expect(identity(request("/search", basic("ACCESS:wrong")), keys) == ClientIdentity(key: "address:10.0.0.1", authenticated: false))
        #expect(identity(request("/v3/events?code=x"), keys) == ClientIdentity(key: "address:10.0.0.1", authenticated: false))
        // An open server checks nothing: every request is its address, and accepted.
        #expect(identity(request("/search?access_key=k1"), open) == ClientIdentity(key: "address:10.0.0.1", authenticated: true))
        let forwarded = HTTPFields([HTTPField(name: HTTPField.Name("X-Forwarded-For")!, value: "6.6.6.6, 203.0.113.9")])
        #expect(identity(request("/search", forwarded), open).key == "address:10.0.0.1", "the header is ignored unless trusted")
        var proxied = ClientLimits()
        proxied.addressHeader = "X-Forwarded-For"
        #expect(identity(request("/search", forwarded), open, limits: proxied).key == "address:203.0.113.9")
    }
}
