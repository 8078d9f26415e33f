import EventDelivery
import Foundation
import Networking
import TestSupport
import Testing
import Tracking
@testable import VisualSearchServer

/// The keyless collector's limits (``CollectorLimits``) against a real server
/// on loopback, batches sent from two source addresses (127.0.0.2 and
/// 127.0.0.3), the buckets refilled by a clock the test steps: one address
/// flooding is refused whole (429, Retry-After, nothing stored) while the
/// other is still served; the total rate and the cap on stored bytes hold;
/// statistics count exactly what was stored.
@Suite("Collector limits on loopback", .timeLimit(.minutes(10)))
struct CollectorLimitsTests {
    /// `count` valid product views with ids `prefix0`… as a tracker's batch body.
    static func batch(_ count: Int, prefix: String) -> [UInt8] {
        EventWireFormat.batchBody(events(count, prefix: prefix), uid: "u")
    }

    static func events(_ count: Int, prefix: String) -> [TrackingEvent] {
        (0..<count).map { index in
            var event = TrackingEvent.productView(queryId: "q-\(prefix)", pid: "p\(index % 7)", imgUrl: "https://shop.example/p.jpg", pos: 1)
            event.eventID = "\(prefix)\(index)"
            event.uid = "u"
            return event
        }
    }

    /// Posts `body` to `/v3/events` on a connection from `source`.
    static func post(_ body: [UInt8], port: Int, from source: String) async throws -> (status: Int, headers: [String: String], text: String) {
        let connection = try RawConnection(port: port, from: source)
        connection.write("POST /v3/events?code=dev HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                         + "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n")
        _ = await connection.write(bytes: body)
        let answer = try #require(await connection.readResponse(), "no answer from \(source)")
        return (answer.status, answer.headers, String(decoding: answer.body, as: UTF8.self))
    }

    static func header(_ name: String, _ headers: [String: String]) -> String? {
        headers.first { $0.key.lowercased() == name }?.value
    }

    @Test("one address over its rate: its batch is refused whole with 429 and Retry-After; another address still gets 200; the bucket refills with the clock")
    func perAddressRate() async throws {
        let clock = SteppedClock()
        try await ServerFixture.with({
            $0.admissionClock = clock
            // 10 events a second an address: a bucket of 500 (one full batch), nothing else limited.
            $0.limits.collector = CollectorLimits(eventsPerSecondPerAddress: 10, eventsPerSecond: 0, bytesPerAddressPerHour: 0, maxStoredBytes: 0)
        }) { running in
            let port = try #require(running.url.port)
            let store = running.server.collector
            let before = try await store.eventCount()
            #expect(try await Self.post(Self.batch(400, prefix: "a"), port: port, from: "127.0.0.2").status == 200)
            let flood = try await Self.post(Self.batch(400, prefix: "b"), port: port, from: "127.0.0.2")
            #expect(flood.status == 429, "\(flood.status) \(flood.text)")
            #expect(Self.header("retry-after", flood.headers) == "30", "100 tokens left, 400 needed at 10 a second: \(flood.headers)")
            #expect(flood.text.contains("more than 10 events a second from this address"), "\(flood.text)")
            #expect(try await store.eventCount() == before + 400, "nothing of the refused batch is stored")
            // The other address has a bucket of its own.
            #expect(try await Self.post(Self.batch(50, prefix: "c"), port: port, from: "127.0.0.3").status == 200)
            clock.step(by: .seconds(29))
            #expect(try await Self.post(Self.batch(400, prefix: "b"), port: port, from: "127.0.0.2").status == 429, "a second short")
            clock.step(by: .seconds(1))
            let resent = try await Self.post(Self.batch(400, prefix: "b"), port: port, from: "127.0.0.2")
            #expect(resent.status == 200, "the batch sent again after Retry-After is taken: \(resent.text)")
            #expect(try await store.eventCount() == before + 850)
            let stats = try await store.stats(since: nil, limit: 10)
            #expect(stats.actions["product_view"] == 850, "statistics count what was stored: \(stats.actions)")
            #expect(Set(stats.queries.map(\.key)) == ["q-a", "q-b", "q-c"])
        }
    }

    @Test("all addresses together over the total rate: 429 naming it; bytes an hour per address: 429 for that address only")
    func totalRateAndBytes() async throws {
        let clock = SteppedClock()
        try await ServerFixture.with({
            $0.admissionClock = clock
            $0.limits.collector = CollectorLimits(eventsPerSecondPerAddress: 0, eventsPerSecond: 10, bytesPerAddressPerHour: 0, maxStoredBytes: 0)
        }) { running in
            let port = try #require(running.url.port)
            #expect(try await Self.post(Self.batch(300, prefix: "a"), port: port, from: "127.0.0.2").status == 200)
            let other = try await Self.post(Self.batch(300, prefix: "b"), port: port, from: "127.0.0.3")
            #expect(other.status == 429 && other.text.contains("more than 10 events a second from all addresses"), "\(other.status) \(other.text)")
            #expect(Self.header("retry-after", other.headers) == "10")
        }
        let bytes = Self.events(100, prefix: "r0-").reduce(0) { $0 + $1.storedByteCount }  // a batch's stored bytes
        try await ServerFixture.with({
            $0.admissionClock = clock  // never stepped: the hour's bucket does not refill
            $0.limits.collector = CollectorLimits(eventsPerSecondPerAddress: 0, eventsPerSecond: 0, bytesPerAddressPerHour: bytes * 5 / 2, maxStoredBytes: 0)
        }) { running in
            let port = try #require(running.url.port)
            var statuses: [Int] = []
            for round in 0..<4 { statuses.append(try await Self.post(Self.batch(100, prefix: "r\(round)-"), port: port, from: "127.0.0.2").status) }
            #expect(statuses == [200, 200, 429, 429], "two batches fit in 2.5 batches' bytes: \(statuses)")
            let refused = try await Self.post(Self.batch(100, prefix: "z"), port: port, from: "127.0.0.2")
            #expect(refused.text.contains("of events an hour from this address"), "\(refused.text)")
            #expect(try await Self.post(Self.batch(100, prefix: "y"), port: port, from: "127.0.0.3").status == 200, "another address is not charged")
        }
    }

    @Test("the cap on stored event bytes: batches get 507 with Retry-After once it is reached, from every address, however small, and the store stays under it")
    func storedCap() async throws {
        let cap = 60_000
        try await ServerFixture.with({
            $0.limits.collector = CollectorLimits(eventsPerSecondPerAddress: 0, eventsPerSecond: 0, bytesPerAddressPerHour: 0, maxStoredBytes: cap)
        }) { running in
            let port = try #require(running.url.port)
            let store = running.server.collector
            var statuses: [Int] = []
            for round in 0..<12 {
                let source = round % 2 == 0 ? "127.0.0.2" : "127.0.0.3"
                statuses.append(try await Self.post(Self.batch(40, prefix: "r\(round)-"), port: port, from: source).status)
            }
            #expect(statuses.first == 200)
            let firstFull = try #require(statuses.firstIndex(of: 507), "never full: \(statuses)")
            #expect(statuses[firstFull...].allSatisfy { $0 == 507 }, "\(statuses)")
            let stored = try await store.storedEventBytes()
            #expect(stored <= cap, "\(stored) bytes stored, cap \(cap)")
            #expect(try await store.eventCount() == 40 * firstFull)
            let full = try await Self.post(Self.batch(1, prefix: "late"), port: port, from: "127.0.0.3")
            #expect(full.status == 507 && Self.header("retry-after", full.headers) == "60", "\(full.status) \(full.headers)")
            #expect(full.text.contains("--collector-max-mb"), "\(full.text)")
            // Statistics stay correct: exactly what was stored.
            let stats = try await store.stats(since: nil, limit: 1000)
            #expect(stats.total == 40 * firstFull)
        }
    }

    /// The tracker's time is the server's: waiting steps the server's clock.
    struct SharedClock: TrackingClock {
        let server: SteppedClock
        func now() -> Date { Date() }
        func sleep(seconds: Double) async throws { server.step(by: .milliseconds(Int64(seconds * 1000))) }
    }

    @Test("the tracker against a rate-limited collector: it waits each Retry-After and sends again; every event is stored once, none dropped")
    func trackerHonoursRetryAfter() async throws {
        let clock = SteppedClock()
        try await ServerFixture.with({
            $0.admissionClock = clock
            $0.limits.collector = CollectorLimits(eventsPerSecondPerAddress: 20, eventsPerSecond: 0, bytesPerAddressPerHour: 0, maxStoredBytes: 0)
        }) { running in
            let queue = try EventQueue(path: Repository.temporaryDirectory("queue") + "/queue.sqlite")
            let tracker = Tracker(queue: queue, transport: HTTPEventTransport(endpoint: .custom(running.url), code: "dev"),
                                  configuration: .init(batchSize: 100), clock: SharedClock(server: clock))
            for index in 0..<1200 { try await tracker.track(.productClick(queryId: "q\(index % 4)", pid: "p", imgUrl: "https://shop.example/p.jpg", pos: 1)) }
            let report = await tracker.flush(maxFailures: 20)
            #expect(report.sent == 1200 && report.rejected == 0 && report.remaining == 0, "\(report)")
            #expect(try await running.server.collector.eventCount() == 1200)
            // A bucket of 500 at 20 a second: 5 batches at once, then one batch (100 events) every 5 s, as Retry-After said.
            let waits = await tracker.backoffHistory
            #expect(!waits.isEmpty && waits.allSatisfy { $0 == 5 }, "\(waits)")
        }
    }

    @Test("IPv6 addresses are limited by their /64; IPv4 addresses as they are")
    func addressKeys() {
        #expect(CollectorLimiter.addressKey("2001:db8:1:2:aaaa::1") == CollectorLimiter.addressKey("2001:db8:1:2:bbbb::9"))
        #expect(CollectorLimiter.addressKey("2001:db8:1:2::1") != CollectorLimiter.addressKey("2001:db8:1:3::1"))
        #expect(CollectorLimiter.addressKey("127.0.0.2") == "127.0.0.2")
        #expect(CollectorLimiter.addressKey("::1") == "::1")
    }
}
