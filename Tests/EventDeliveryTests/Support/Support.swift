import Foundation
import ConcurrencyToolkit
@testable import EventDelivery
import TestSupport
import Tracking

enum Temp {
    static func path(_ name: String = "queue.sqlite") -> String {
        Repository.temporaryDirectory("tracking") + "/" + name
    }
}

/// A clock whose sleeps return at once and are recorded.
final class ManualClock: TrackingClock {
    let state = Locked<(now: Date, slept: [Double])>((Date(timeIntervalSince1970: 1_800_000_000), []))
    func now() -> Date { state.withLock { $0.now } }
    func sleep(seconds: Double) async throws {
        state.withLock { $0.slept.append(seconds); $0.now = $0.now.addingTimeInterval(seconds) }
        await Task.yield()
    }
    func advance(_ seconds: Double) { state.withLock { $0.now = $0.now.addingTimeInterval(seconds) } }
    var slept: [Double] { state.withLock { $0.slept } }
}

/// A transport that runs a script of failures, then delivers into a
/// ``CollectorStore`` (by default ``MemoryCollector``, which keeps the
/// collector's rules: per-event validation, dedup by event id).
final class ScriptedTransport: EventTransport {
    let store: any CollectorStore
    /// Outcomes for the first calls, in order; afterwards events go to the store.
    let script: Locked<[BatchOutcome]>
    /// Events the store rejects when this returns true (simulating a server's own rules).
    let rejectsBatchContaining: (@Sendable (TrackingEvent) -> Bool)?
    let calls = Locked<[[String]]>([])

    init(store: any CollectorStore = MemoryCollector(), script: [BatchOutcome] = [], rejectsBatchContaining: (@Sendable (TrackingEvent) -> Bool)? = nil) {
        self.store = store
        self.script = Locked(script)
        self.rejectsBatchContaining = rejectsBatchContaining
    }

    func send(_ events: [TrackingEvent], uid: String?) async -> BatchOutcome {
        calls.withLock { $0.append(events.compactMap(\.eventID)) }
        if let outcome = script.withLock({ (script: inout [BatchOutcome]) -> BatchOutcome? in script.isEmpty ? nil : script.removeFirst() }) {
            return outcome
        }
        if let rejects = rejectsBatchContaining, events.contains(where: rejects) {
            return .batchRejected(reason: "HTTP 400: bad event in batch")
        }
        do {
            let results = try await store.receive(events)
            return .results(results.map { $0.code == 0 ? .accepted : .rejected(reason: $0.message) })
        } catch {
            return .results(events.map { _ in .retry(reason: "store: \(error)", retryAfter: nil) })
        }
    }

    var callCount: Int { calls.withLock { $0.count } }
}

/// A real clock (cancellable sleeps) that tells a test when the tracker has
/// started waiting out a long sleep, e.g. its flush interval.
final class SignallingClock: TrackingClock {
    let longSleeps = Locked(0)
    func now() -> Date { Date() }
    func sleep(seconds: Double) async throws {
        if seconds >= 60 { longSleeps.withLock { $0 += 1 } }
        try await Task.sleep(for: .milliseconds(Int64(seconds * 1000)))
    }

    /// Waits (up to 5 s) until a long sleep has begun.
    func waitForLongSleep() async -> Bool {
        for _ in 0..<500 {
            if longSleeps.withLock({ $0 }) > 0 { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }
}
