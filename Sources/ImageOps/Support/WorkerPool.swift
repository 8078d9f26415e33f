import Foundation
import ConcurrencyToolkit

/// Runs `count` independent items on a fixed number of worker threads and
/// collects their results in order. Each worker holds one item at a time, so
/// memory is bounded by `workers` items in flight.
///
/// ```swift
/// let sizes = WorkerPool(workers: 2).map(count: files.count) { index in process(files[index]) }
/// ```
public struct WorkerPool: Sendable {
    /// The number of threads. At least 1.
    public let workers: Int

    /// Creates a pool description; threads start only inside ``map(count:isCancelled:onResult:_:)``.
    public init(workers: Int) { self.workers = Swift.max(1, workers) }

    /// Processes items `0..<count`, blocking until done (for synchronous callers: a command-line job's
    /// own thread). An `async` caller uses the overload below, which leaves its thread free.
    /// - Parameters:
    ///   - isCancelled: polled before each item; once `true`, no new item starts.
    ///   - onResult: called for each finished item (index, result, number done so far), one call at a time.
    ///   - body: the work for one item, run on a worker thread.
    /// - Returns: the results by index; `nil` for items never started because of cancellation.
    public func map<Result: Sendable>(count: Int,
                                      isCancelled: @escaping @Sendable () -> Bool = { false },
                                      onResult: @escaping @Sendable (Int, Result, Int) -> Void = { _, _, _ in },
                                      _ body: @escaping @Sendable (Int) -> Result) -> [Result?] {
        let finished = DispatchSemaphore(value: 0)
        let collected = Locked<[Result?]>([])
        start(count: count, isCancelled: isCancelled, onResult: onResult, whenDone: { results in
            collected.withLock { $0 = results }
            finished.signal()
        }, body)
        finished.wait()
        return collected.withLock { $0 }
    }

    /// Processes items `0..<count` on the worker threads and resumes once all are done, without holding
    /// the caller's thread while they run. Swift's cooperative pool has one thread per core: a task that
    /// waited for the workers there (the synchronous overload) kept every other task of the process —
    /// a server's requests, other tests — from running for the whole job.
    public func map<Result: Sendable>(count: Int,
                                      isCancelled: @escaping @Sendable () -> Bool = { false },
                                      onResult: @escaping @Sendable (Int, Result, Int) -> Void = { _, _, _ in },
                                      _ body: @escaping @Sendable (Int) -> Result) async -> [Result?] {
        await withCheckedContinuation { finished in
            start(count: count, isCancelled: isCancelled, onResult: onResult, whenDone: { finished.resume(returning: $0) }, body)
        }
    }

    /// Starts the worker threads (``OwnThread``, with 8 MiB stacks for the image kernels); the last
    /// one to find no item left calls `whenDone` with the results.
    private func start<Result: Sendable>(count: Int,
                                         isCancelled: @escaping @Sendable () -> Bool,
                                         onResult: @escaping @Sendable (Int, Result, Int) -> Void,
                                         whenDone: @escaping @Sendable ([Result?]) -> Void,
                                         _ body: @escaping @Sendable (Int) -> Result) {
        let threads = Swift.min(workers, Swift.max(count, 1))
        let state = SharedState(State<Result>(results: Array(repeating: nil, count: count), live: threads))
        for index in 0..<threads {
            OwnThread.start(named: "vsearch-work-\(index)", stackSize: 8 << 20) {
                defer {
                    let results = state.mutex.withLock { run -> [Result?]? in
                        run.live -= 1
                        return run.live == 0 ? run.results : nil
                    }
                    if let results { whenDone(results) }
                }
                while !isCancelled(), let index = state.mutex.withLock({ $0.takeNext(total: count) }) {
                    let result = body(index)
                    state.mutex.withLock { run in
                        run.results[index] = result
                        run.completed += 1
                        onResult(index, result, run.completed)
                    }
                }
            }
        }
    }

    struct State<Result: Sendable>: Sendable {
        var results: [Result?]
        /// Worker threads not yet finished.
        var live: Int
        var next = 0
        var completed = 0

        mutating func takeNext(total: Int) -> Int? {
            guard next < total else { return nil }
            defer { next += 1 }
            return next
        }
    }
}

/// A mutex-protected value shared by worker threads.
final class SharedState<Value: Sendable>: Sendable {
    let mutex: Locked<Value>
    init(_ value: Value) { mutex = Locked(value) }
}
