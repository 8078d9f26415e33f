import Foundation
import Synchronization
@testable import Tracking

enum Temp {
    static func path(_ name: String = "queue.sqlite") -> String {
        let directory = NSTemporaryDirectory() + "vsearch-tracking-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory + "/" + name
    }
}

/// A clock whose sleeps return at once and are recorded.
final class ManualClock: TrackingClock {
    let state = Mutex<(now: Date, slept: [Double])>((Date(timeIntervalSince1970: 1_800_000_000), []))
    func now() -> Date { state.withLock { $0.now } }
    func sleep(seconds: Double) async throws {
        state.withLock { $0.slept.append(seconds); $0.now = $0.now.addingTimeInterval(seconds) }
        await Task.yield()
    }
    func advance(_ seconds: Double) { state.withLock { $0.now = $0.now.addingTimeInterval(seconds) } }
    var slept: [Double] { state.withLock { $0.slept } }
}

/// A transport that runs a script of failures, then delivers into a real
/// ``EventStore`` (the collector's storage), so dedup is the real one.
final class ScriptedTransport: EventTransport {
    let store: EventStore
    /// Outcomes for the first calls, in order; afterwards events go to the store.
    let script: Mutex<[BatchOutcome]>
    /// Events the store rejects when this returns true (simulating a server's own rules).
    let rejectsBatchContaining: (@Sendable (TrackingEvent) -> Bool)?
    let calls = Mutex<[[String]]>([])

    init(store: EventStore, script: [BatchOutcome] = [], rejectsBatchContaining: (@Sendable (TrackingEvent) -> Bool)? = nil) {
        self.store = store
        self.script = Mutex(script)
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
            let results = try store.receive(events)
            return .results(results.map { $0.code == 0 ? .accepted : .rejected(reason: $0.message) })
        } catch {
            return .results(events.map { _ in .retry(reason: "store: \(error)", retryAfter: nil) })
        }
    }

    var callCount: Int { calls.withLock { $0.count } }
}

func click(_ index: Int) -> TrackingEvent {
    .productClick(queryId: "q\(index % 3)", pid: "p\(index % 5)", imgUrl: "https://cdn.example/p.jpg", pos: 1 + index % 4)
}
