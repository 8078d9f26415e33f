import Foundation
import Logging
import Networking
import ServiceLifecycle
import TestSupport
import Testing
@testable import EventDelivery
import Tracking

@Suite("Tracker as a service: run, shutdown, retry policy, logging", .timeLimit(.minutes(10)))
struct TrackerServiceTests {
    static let quiet = Logger(label: "test.tracking") { _ in SwiftLogNoOpLogHandler() }

    func make(store: MemoryCollector, script: [BatchOutcome] = []) throws -> (Tracker, ScriptedTransport, SignallingClock) {
        let transport = ScriptedTransport(store: store, script: script)
        let clock = SignallingClock()
        let tracker = Tracker(queue: try EventQueue(path: Temp.path()), transport: transport,
                              configuration: .init(flushInterval: 3600), clock: clock, logger: Self.quiet)
        return (tracker, transport, clock)
    }

    @Test("graceful shutdown of its service group stops the loop; a final attempt delivers what was queued meanwhile")
    func gracefulShutdown() async throws {
        let store = MemoryCollector()
        let (tracker, transport, clock) = try make(store: store)
        let group = ServiceGroup(services: [tracker], logger: Self.quiet)
        let running = Task { try await group.run() }
        #expect(await clock.waitForLongSleep())  // nothing queued: the loop waits out its flush interval
        for index in 0..<3 { try await tracker.track(click(index)) }
        #expect(store.count() == 0)
        await group.triggerGracefulShutdown()
        try await running.value
        #expect(store.count() == 3)
        #expect(transport.callCount == 1)
    }

    @Test("cancelling run() ends the loop the same way: the final attempt still runs")
    func cancelled() async throws {
        let store = MemoryCollector()
        let (tracker, transport, clock) = try make(store: store)
        let running = Task { try await tracker.run() }
        #expect(await clock.waitForLongSleep())
        for index in 0..<4 { try await tracker.track(click(index)) }
        running.cancel()
        try await running.value
        #expect(store.count() == 4 && transport.callCount == 1)
    }

    @Test("the final attempt stops at its first failure; the events stay queued for the next run")
    func finalAttemptFails() async throws {
        let store = MemoryCollector()
        let down = BatchOutcome.results([.retry(reason: "connection refused", retryAfter: nil)])
        let (tracker, transport, clock) = try make(store: store, script: [down, down])
        let running = Task { try await tracker.run() }
        #expect(await clock.waitForLongSleep())
        try await tracker.track(click(1))
        running.cancel()
        try await running.value
        #expect(transport.callCount == 1 && store.count() == 0)
        #expect(try await tracker.queue.count() == 1)
    }

    @Test("a finite retry policy ends a flush after its attempts, with its exact waits")
    func finitePolicy() async throws {
        let store = MemoryCollector()
        let down = BatchOutcome.results([.retry(reason: "HTTP 503", retryAfter: nil)])
        let clock = ManualClock()
        let retry = RetryPolicy(maxAttempts: 3, baseDelay: 0.5, maxDelay: 8, maxRetryAfter: 8, jitter: 0)
        let tracker = Tracker(queue: try EventQueue(path: Temp.path()), transport: ScriptedTransport(store: store, script: Array(repeating: down, count: 10)),
                              configuration: .init(retry: retry), clock: clock, logger: Self.quiet)
        try await tracker.track(click(1))
        let report = await tracker.flush(maxFailures: 20)
        #expect(report.remaining == 1 && clock.slept == [0.5, 1])
    }

    @Test("a Retry-After beyond the cap is capped, never a reason to give up, with unbounded attempts")
    func longRetryAfterCapped() async throws {
        let store = MemoryCollector()
        let clock = ManualClock()
        let tracker = Tracker(queue: try EventQueue(path: Temp.path()),
                              transport: ScriptedTransport(store: store, script: [.results([.retry(reason: "HTTP 429", retryAfter: 600)])]),
                              configuration: .init(retry: .delivery), clock: clock, logger: Self.quiet)
        try await tracker.track(click(1))
        _ = await tracker.flush()
        #expect(clock.slept == [60] && store.count() == 1)
        #expect(await tracker.backoffHistory == [60])
    }

    @Test("dropped events and failed rounds are logged through the tracker's Logger")
    func logging() async throws {
        let records = RecordingLogHandler.Records()
        let store = MemoryCollector()
        let script: [BatchOutcome] = [
            .results([.accepted, .rejected(reason: "code 7: bad pid")]),
            .results([.retry(reason: "HTTP 503", retryAfter: nil)]),
        ]
        let tracker = Tracker(queue: try EventQueue(path: Temp.path()), transport: ScriptedTransport(store: store, script: script),
                              configuration: .init(batchSize: 2, retry: TrackerTests.exact), clock: ManualClock(),
                              logger: RecordingLogHandler.logger(records))
        for index in 0..<3 { try await tracker.track(click(index)) }
        try await tracker.whileDelivering {
            #expect(await store.until(stored: 1))
        }
        let dropped = records.list.filter { $0.level == .warning && $0.message.hasPrefix("dropped event") }
        #expect(dropped.count == 1)
        #expect(dropped.first?.message.hasSuffix("code 7: bad pid") == true)
        #expect(dropped.first?.metadata["action"] == "product_click")
        let failed = records.list.filter { $0.level == .notice && $0.message == "delivery failed; retrying" }
        #expect(failed.count == 1)
        #expect(failed.first?.metadata["reason"] == "HTTP 503")
    }
}
