import Foundation
import ImageOps
import SearchEngine
import Synchronization
import TestSupport
import Testing
import VisualSearch
import SQLiteCatalog
import ConcurrencyToolkit

/// Indexing runs on threads of its own: while index runs wait for their workers, the cooperative pool —
/// one thread per core, shared by every task of the process (a server's requests among them) — stays free.
/// Issue 25's CI failure was this: the indexer waited for its workers with `DispatchGroup.wait()` on a pool
/// thread, two waits took the whole pool, and every server in the test process stalled for 20–57 s.
/// (Ten minutes: three 20,000-row transactions took 207 s under AddressSanitizer beside a build; the bound is a hang guard, not a speed check.)
@Suite("Indexing, SQLite writes and the cooperative pool", .timeLimit(.minutes(10)))
struct CooperativePoolTests {
    /// An embedder whose inference waits (on the indexer's worker thread) until the test opens its gate,
    /// and counts the runs that have reached it. (`open` is read and written under `gate`'s lock.)
    final class GatedEmbedder: ImageEmbedder, @unchecked Sendable {
        let descriptor = EmbeddingDescriptor(name: "gated", version: "1", dimension: 16, preprocessing: "none", contentHash: "gated")
        let reached = Atomic<Int>(0)
        /// One element each time a run reaches the gate.
        let arrivals: AsyncStream<Void>
        private let arrived: AsyncStream<Void>.Continuation
        private let gate = NSCondition()
        private var open = false

        init() { (arrivals, arrived) = AsyncStream<Void>.makeStream() }

        func decodeScale(for size: PixelSize) -> Double { min(1, 64 / Double(max(1, max(size.width, size.height)))) }

        func embed(_ images: [PixelBuffer]) throws(EmbeddingError) -> [[Float]] {
            reached.add(1, ordering: .relaxed)
            arrived.yield()
            gate.lock()
            // A bound, so that code which holds the pool fails this test instead of hanging it.
            let deadline = Date().addingTimeInterval(30)
            while !open && gate.wait(until: deadline) {}
            gate.unlock()
            return images.map { _ in (0..<16).map { Float($0 + 1) } }
        }

        func openGate() {
            gate.lock()
            open = true
            gate.broadcast()
            gate.unlock()
        }
    }

    /// How many index runs have ended.
    final class Finished: Sendable {
        let count = Atomic<Int>(0)
    }

    @Test("more index runs than the pool has threads, all waiting on their workers: the test's own task still runs, before any run ends")
    func indexRunsLeaveThePoolFree() async throws {
        let runs = ProcessInfo.processInfo.activeProcessorCount + 1
        let embedder = GatedEmbedder()
        let finished = Finished()
        let folder = Repository.temporaryDirectory("pool-images")
        try FileManager.default.copyItem(atPath: Repository.images + "/coffee_cup.jpg", toPath: folder + "/coffee_cup.jpg")
        try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<runs {
                group.addTask {
                    let store = try await SQLiteCatalogStore(path: Repository.temporaryDirectory("pool-\(index)") + "/catalog.sqlite", creating: true)
                    var configuration = Indexer.Configuration()
                    configuration.jobs = 1
                    configuration.features = FeaturePipeline(learned: embedder)
                    let summary = try await Indexer(store: store, configuration: configuration).run(directory: folder)
                    finished.count.add(1, ordering: .relaxed)
                    return summary.indexed
                }
            }
            // Every run is inside its workers now. Code that waited for them on a pool thread would leave this task
            // no thread to run on until the gate's 30 s bound let some run end.
            var arrivals = embedder.arrivals.makeAsyncIterator()
            for _ in 0..<runs { _ = await arrivals.next() }
            #expect(finished.count.load(ordering: .relaxed) == 0, "an index run ended before this task could run: the runs held the pool")
            embedder.openGate()
            var indexed = 0
            for try await count in group { indexed += count }
            #expect(indexed == runs, "each run indexes its one image")
        }
    }

    /// The order things happened in, for the SQLite test below.
    final class Log: Sendable {
        let entries = Locked<[String]>([])
        func add(_ entry: String) { entries.withLock { $0.append(entry) } }
    }

    @Test("more long SQLite writes than the pool has threads: the test's own task still runs, before any write ends")
    func longSQLiteWritesLeaveThePoolFree() async throws {
        let writes = ProcessInfo.processInfo.activeProcessorCount + 1
        let store = try await SQLiteCatalogStore(path: Repository.temporaryDirectory("pool-writes") + "/catalog.sqlite", creating: true)
        // One transaction of 20,000 rows each: a second or more of work on GRDB's writer thread.
        let batches = (0..<writes).map { write in (0..<20_000).map { Items.item("w\(write)-\($0)", seed: $0) } }
        let log = Log()
        let (started, starting) = AsyncStream<Void>.makeStream()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (write, batch) in batches.enumerated() {
                group.addTask {
                    starting.yield()
                    try await store.upsert(batch, schema: FieldSchema())
                    log.add("write \(write) committed")
                }
            }
            // Every write has begun. A store that wrote synchronously on a pool thread would hold the whole pool
            // (more writes than threads), and this task could not run again until one of them had committed.
            var arrivals = started.makeAsyncIterator()
            for _ in 0..<writes { _ = await arrivals.next() }
            log.add("probe")
            try await group.waitForAll()
        }
        let entries = log.entries.withLock { $0 }
        #expect(entries.first == "probe", "\(entries)")
        #expect(try await store.count() == writes * 20_000)
    }
}
