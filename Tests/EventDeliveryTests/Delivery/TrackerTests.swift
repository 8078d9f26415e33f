import Foundation
import Networking
import TestSupport
import Testing
@testable import EventDelivery
import Tracking

@Suite("Tracker delivery", .timeLimit(.minutes(10)))
struct TrackerTests {
    /// Backoff without jitter so waits are exact: 0.5 s doubling to 8 s, Retry-After up to 8 s, never giving up.
    static let exact = RetryPolicy(maxAttempts: .max, baseDelay: 0.5, maxDelay: 8, maxRetryAfter: 8, jitter: 0)

    func make(script: [BatchOutcome] = [], batchSize: Int = 50, rejects: (@Sendable (TrackingEvent) -> Bool)? = nil)
        throws -> (Tracker, ScriptedTransport, MemoryCollector, ManualClock, EventQueue) {
        let store = MemoryCollector()
        let transport = ScriptedTransport(store: store, script: script, rejectsBatchContaining: rejects)
        let clock = ManualClock()
        let queue = try EventQueue(path: Temp.path())
        let tracker = Tracker(queue: queue, transport: transport,
                              configuration: Tracker.Configuration(batchSize: batchSize, retry: Self.exact), clock: clock)
        return (tracker, transport, store, clock, queue)
    }

    static func down(_ count: Int) -> BatchOutcome { .results(Array(repeating: .retry(reason: "connection refused", retryAfter: nil), count: count)) }

    @Test("an invalid event is refused at the call and never queued")
    func invalidRefused() async throws {
        let (tracker, _, _, _, queue) = try make()
        await #expect(throws: TrackingError.invalidEvent(field: "pos", rule: "0 is below 1 (positions start at 1)")) {
            try await tracker.track(.productClick(queryId: "1", pid: "p", imgUrl: "https://shop.example/p.jpg", pos: 0))
        }
        #expect(try await queue.count() == 0)
    }

    @Test("server down, then 503, then up: every event delivered once, backoff doubling to its cap")
    func downThenUp() async throws {
        let failures: [BatchOutcome] = (0..<6).map { _ in Self.down(10) } + [.results(Array(repeating: .retry(reason: "HTTP 503", retryAfter: nil), count: 10))]
        let (tracker, transport, store, clock, queue) = try make(script: failures, batchSize: 10)
        for index in 0..<25 { try await tracker.track(click(index)) }
        let report = await tracker.flush(maxFailures: 20)
        #expect(report.sent == 25 && report.remaining == 0)
        #expect(store.count() == 25)
        #expect(clock.slept == [0.5, 1, 2, 4, 8, 8, 8])
        #expect(transport.callCount == 7 + 3)
        let counters = try await queue.counters()
        #expect(counters.sent == 25 && counters.retried == 70 && counters.queued == 0)
    }

    @Test("429 with Retry-After: the tracker waits what the server asked")
    func retryAfter() async throws {
        let (tracker, _, store, clock, _) = try make(script: [.results([.retry(reason: "HTTP 429", retryAfter: 7)])])
        try await tracker.track(click(1))
        _ = await tracker.flush()
        #expect(clock.slept == [7])
        #expect(store.count() == 1)
    }

    @Test("one event the server rejects: only that one is dropped, counted and logged")
    func oneRejected() async throws {
        let (tracker, _, store, _, queue) = try make(script: [.results([.accepted, .rejected(reason: "code 7: bad pid"), .accepted])])
        for index in 0..<3 { try await tracker.track(click(index)) }
        let report = await tracker.flush()
        #expect(report.sent == 2 && report.rejected == 1 && report.problems.contains { $0.contains("bad pid") })
        #expect(try await queue.counters().droppedRejected == 1)
        #expect(try await queue.count() == 0)
        #expect(store.count() == 0)  // the scripted answer stood in for the server: nothing reached the store
    }

    @Test("a whole batch refused: split until the bad event is alone; its batch-mates are delivered")
    func bisection() async throws {
        let (tracker, transport, store, _, queue) = try make(batchSize: 16, rejects: { $0.s1 == "bad" })
        for index in 0..<16 {
            var event = click(index)
            if index == 11 { event.s1 = "bad" }
            try await tracker.track(event)
        }
        let report = await tracker.flush()
        #expect(report.sent == 15 && report.rejected == 1)
        #expect(store.count() == 15)
        #expect(try await queue.count() == 0)
        #expect(transport.callCount == 1 + 2 + 2 + 2 + 2)  // 16 → 8+8 → 4+4 → 2+2 → 1+1
    }

    @Test("killed before delivering: a new tracker on the same queue delivers everything")
    func killedBeforeDelivery() async throws {
        let path = Temp.path()
        do {
            let tracker = Tracker(queue: try EventQueue(path: path), transport: ScriptedTransport())
            for index in 0..<40 { try await tracker.track(click(index)) }
        }  // dropped with no flush and no shutdown: as after kill -9
        let store = MemoryCollector()
        let report = await Tracker(queue: try EventQueue(path: path), transport: ScriptedTransport(store: store)).flush()
        #expect(report.sent == 40)
        #expect(store.count() == 40)
    }

    @Test("killed between 'batch sent' and 'batch removed': resent, and the collector deduplicates to the right count")
    func killedAfterSend() async throws {
        let path = Temp.path()
        let store = MemoryCollector()
        let queue = try EventQueue(path: path)
        for index in 0..<30 { _ = try await queue.append(click(index), now: Date()) }
        // The first batch reaches the collector, then the process dies before markSent.
        _ = try await store.receive(try await queue.peek(limit: 20).map(\.event))
        let report = await Tracker(queue: try EventQueue(path: path), transport: ScriptedTransport(store: store)).flush()
        #expect(report.sent == 30)
        #expect(store.count() == 30)
    }

    @Test("the delivery loop delivers without flush while a closure runs, and stops after it")
    func loop() async throws {
        let (tracker, _, store, _, _) = try make()
        try await tracker.whileDelivering {
            for index in 0..<5 { try await tracker.track(click(index)) }
            #expect(await store.until(stored: 5))
            #expect(store.count() == 5)
        }
    }
}
