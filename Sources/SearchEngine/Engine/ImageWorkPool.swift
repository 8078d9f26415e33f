import Foundation
import ImageOps
import ConcurrencyToolkit
import VisualSearch
#if canImport(Glibc)
import Glibc
#endif

/// Where CPU-heavy image work runs in a server — decoding uploaded or
/// fetched query images, indexing inserted images, making thumbnails: on
/// threads of its own, off Swift's cooperative pool, admitted by one budget
/// of decoded pixels.
///
/// Swift concurrency's cooperative pool has one thread per core. Decoding an
/// image is seconds of synchronous work; run there, a few uploads occupy
/// every thread and a search by `im_name` (a millisecond of work) waits
/// behind them. Here the work runs on ``Limits/workers`` threads at a lower
/// scheduling priority (``Limits/niceness``), so the kernel gives the
/// request threads the CPU first, and at most ``Limits/pixelBudget``
/// decoded pixels are in memory at once. A job that does not fit waits;
/// waiting jobs start client by client (``client``: the least recently served
/// client's oldest job first — first come, first served within one client and
/// when there is one), so a client with many uploads waiting cannot hold back
/// another's one; beyond ``Limits/maxQueued`` waiting, or after
/// ``Limits/maxWait``, it is refused with ``VisualSearchError/overloaded(reason:retryAfter:)``
/// (HTTP 503 with `Retry-After`) instead of waiting without bound.
///
/// ```swift
/// let pool = ImageWorkPool(limits: .init(workers: 2, pixelBudget: 64_000_000))
/// let features = try await pool.run(pixels: plan.decodedPixels) { () throws(ImageOpsError) in
///     try features.query(bytes, box: nil, plan: plan)
/// }
/// ```
public final class ImageWorkPool: Sendable {
    /// Whose work a job run in this task is: a server sets its client's key
    /// around each request (``run(pixels:_:)`` reads it when the job is
    /// submitted). Empty — one client — by default: first come, first served.
    @TaskLocal public static var client: String = ""

    /// How much image work runs and waits at once.
    public struct Limits: Sendable, Hashable {
        /// Threads doing the work: the number of cores by default.
        public var workers: Int
        /// Decoded pixels in memory across all running work: 64,000,000 by
        /// default (about 256 MB at 4 bytes a pixel). A job is charged what its
        /// decode produces after shrink-on-load; one larger than the whole
        /// budget runs alone.
        public var pixelBudget: Int
        /// Jobs that may wait for a worker or for budget: 64 by default; more are refused (503).
        public var maxQueued: Int
        /// Longest a job waits before it is refused (503): 10 s by default.
        public var maxWait: Duration
        /// Scheduling priority of the worker threads (Linux `nice`, 0–19): 10 by
        /// default, so request handling (priority 0) runs first when both want the CPU.
        public var niceness: Int32

        /// Limits with the documented defaults.
        public init(workers: Int = ProcessInfo.processInfo.activeProcessorCount, pixelBudget: Int = 64_000_000,
                    maxQueued: Int = 64, maxWait: Duration = .seconds(10), niceness: Int32 = 10) {
            self.workers = max(1, workers)
            self.pixelBudget = max(1, pixelBudget)
            self.maxQueued = max(0, maxQueued)
            self.maxWait = maxWait
            self.niceness = niceness
        }
    }

    /// A moment's view of the pool, for metrics.
    public struct Statistics: Sendable, Hashable {
        /// Jobs running now.
        public var running = 0
        /// Jobs waiting now.
        public var queued = 0
        /// Decoded pixels charged by running jobs.
        public var pixelsInFlight = 0
        /// Jobs finished since the pool started.
        public var completed = 0
        /// Decoded pixels of finished jobs, in total.
        public var pixelsDecoded = 0
        /// Jobs refused because the queue was full or they waited too long.
        public var refused = 0
        /// Pixels held by ``Reservation``s (part of ``pixelsInFlight``).
        public var pixelsReserved = 0
        /// Reservations waiting for budget.
        public var reservationsWaiting = 0
        /// Reservations granted since the pool started.
        public var reservationsGranted = 0
    }

    public let limits: Limits
    /// What a waiting job's ``Limits/maxWait`` is measured on (a test steps it).
    let clock: ElapsedClock
    let state: Observed<State>
    let threads: WorkerThreads

    struct Waiter {
        /// Its ticket's id for a job; a reservation's own number for a reservation.
        var id: Int
        var cost: Int
        /// ``ImageWorkPool/client`` when the job was submitted.
        var client: String = ""
        var start: @Sendable () -> Void
        var refuse: @Sendable (VisualSearchError) -> Void
    }

    struct State {
        var statistics = Statistics()
        /// Jobs waiting for a worker or for budget: at most ``Limits/maxQueued``, each until ``Limits/maxWait``.
        var waiting: WaitQueue<Waiter>
        /// ``reserve(pixels:)`` calls waiting for budget, oldest first, with no bound and no deadline: admitted after
        /// the jobs (``admitted(_:)``).
        var reserving: [Waiter] = []
        var nextReservation = 0
        /// When each client with work waiting (or lately served) last had a job started: a tick of ``starts``.
        var lastStarted: [String: Int] = [:]
        var starts = 0
    }

    /// Starts `limits.workers` threads; they stop when the pool is released.
    /// - Parameter clock: what a waiting job's deadline is kept on (``WaitDeadline``).
    public init(limits: Limits = Limits(), clock: ElapsedClock = ElapsedClock()) {
        self.limits = limits
        self.clock = clock
        state = Observed(State(waiting: WaitQueue(capacity: limits.maxQueued, maxWait: limits.maxWait)))
        threads = WorkerThreads(count: limits.workers, niceness: limits.niceness)
    }

    deinit { threads.stop() }

    /// Returns true once `condition` holds, checked again after each change of this pool's statistics (an observation hook,
    /// never a timer); false when the waiting task is cancelled first.
    public func until(_ condition: () -> Bool) async -> Bool { await state.until(condition) }

    /// Counters and gauges as they are now.
    public var statistics: Statistics { state.read { $0.statistics } }

    /// Runs `work` on a worker thread once `pixels` fit in the budget.
    /// - Parameter pixels: what the work decodes (``ShrinkOnLoad/decodedPixelCount(of:minimumSize:)``).
    /// - Throws: the work's ``ImageOpsError`` as ``VisualSearchError/image(_:)``;
    ///   ``VisualSearchError/overloaded(reason:retryAfter:)`` when the queue is full,
    ///   the wait is too long or the caller's task is cancelled while waiting.
    public func run<T: Sendable>(pixels: Int, _ work: @escaping @Sendable () throws(ImageOpsError) -> T) async throws(VisualSearchError) -> T {
        try await run(pixels: pixels, searching: { () throws(VisualSearchError) -> T in
            do throws(ImageOpsError) { return try work() } catch { throw .image(error) }
        })
    }

    /// Runs `work`, whose failures are already search errors (a query's
    /// features: the image's or the learned model's), as ``run(pixels:_:)`` does.
    public func run<T: Sendable>(pixels: Int, searching work: @escaping @Sendable () throws(VisualSearchError) -> T) async throws(VisualSearchError) -> T {
        let cost = min(max(1, pixels), limits.pixelBudget)
        // The deadline is fixed by the ticket, before the job joins the queue: a clock stepped once it waits always
        // reaches it.
        let now = clock.now
        let ticket = state.withLock { $0.waiting.ticket(now: now) }
        let timer = Locked<WaitDeadline?>(nil)
        defer { timer.withLock { $0 }?.cancel() }
        let handoff = Handoff<Result<T, VisualSearchError>>()  // the result passes a lock: ThreadSanitizer sees it
        let outcome: Result<T, VisualSearchError> = await withTaskCancellationHandler {
            await handoff.value {
                let start: @Sendable () -> Void = { [threads] in
                    threads.submit {
                        let result: Result<T, VisualSearchError>
                        do throws(VisualSearchError) { result = .success(try work()) } catch { result = .failure(error) }
                        self.finish(cost: cost)
                        handoff.resume(result)
                    }
                }
                let refuse: @Sendable (VisualSearchError) -> Void = { handoff.resume(.failure($0)) }
                if enqueue(Waiter(id: ticket.id, cost: cost, client: Self.client, start: start, refuse: refuse), with: ticket) {
                    let maxWait = limits.maxWait
                    timer.withLock {
                        $0 = WaitDeadline(at: ticket.deadline, on: clock) { [weak self] in
                            self?.expire(ticket, reason: "an image waited \(maxWait) to be decoded")
                        }
                    }
                }
            }
        } onCancel: {
            expire(ticket, reason: "the request ended while its image waited to be decoded")
        }
        return try outcome.get()
    }

    /// Holds `pixels` of the budget for memory that is not a decode — the
    /// encoded bytes a data API insert downloads and keeps until its batch is
    /// committed (``pixels(forBytes:)``) — until the ``Reservation`` is
    /// released (or shrunk, once the real size is known). It waits, without a
    /// deadline, until the pixels fit and no job is waiting: jobs come first
    /// and are never held back by reservations (a job still starts when no
    /// other runs), so reservations cannot keep the decodes that end them
    /// from running. One larger than the whole budget is charged the whole
    /// budget and granted when nothing else is charged.
    /// - Throws: ``VisualSearchError/overloaded(reason:retryAfter:)`` when the caller's task is cancelled while waiting.
    public func reserve(pixels: Int) async throws(VisualSearchError) -> Reservation {
        let cost = min(max(1, pixels), limits.pixelBudget)
        let id = state.withLock { state in
            state.nextReservation += 1
            return state.nextReservation
        }
        let outcome: Result<Void, VisualSearchError> = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, VisualSearchError>, Never>) in
                let waiter = Waiter(id: id, cost: cost, start: { continuation.resume(returning: .success(())) },
                                    refuse: { continuation.resume(returning: .failure($0)) })
                let started = state.withLock { state in
                    state.reserving.append(waiter)
                    return admitted(&state)
                }
                started.forEach { $0.start() }
            }
        } onCancel: {
            let waiter: Waiter? = state.withLock { state in
                guard let index = state.reserving.firstIndex(where: { $0.id == id }) else { return nil }
                defer { state.statistics.reservationsWaiting = state.reserving.count }
                return state.reserving.remove(at: index)
            }
            waiter?.refuse(.overloaded(reason: "cancelled while waiting for the image budget", retryAfter: retryAfter))
        }
        try outcome.get()
        return Reservation(pool: self, pixels: cost)
    }

    /// Pixels charged for `bytes` held in memory: a decoded pixel is 4 bytes.
    public static func pixels(forBytes bytes: Int) -> Int { max(1, (max(0, bytes) + 3) / 4) }

    /// Budget held by ``reserve(pixels:)`` until released; released when dropped.
    public final class Reservation: Sendable {
        let pool: ImageWorkPool
        let held: Locked<Int>

        init(pool: ImageWorkPool, pixels: Int) {
            self.pool = pool
            held = Locked(pixels)
        }

        deinit { release() }

        /// Pixels held now.
        public var pixels: Int { held.withLock { $0 } }

        /// Gives back all but `pixels` (never grows).
        public func shrink(to pixels: Int) {
            let freed = held.withLock { held in
                let kept = min(held, max(0, pixels))
                defer { held = kept }
                return held - kept
            }
            if freed > 0 { pool.unreserve(freed) }
        }

        /// Gives back everything held.
        public func release() { shrink(to: 0) }
    }

    /// Gives reserved pixels back and starts whoever now fits.
    func unreserve(_ pixels: Int) {
        let next = state.withLock { state in
            state.statistics.pixelsInFlight -= pixels
            state.statistics.pixelsReserved -= pixels
            return admitted(&state)
        }
        next.forEach { $0.start() }
    }

    /// Starts the job now, queues it, or refuses it when the queue is full; true when it waits in the queue.
    @discardableResult
    func enqueue(_ waiter: Waiter, with ticket: WaitQueue<Waiter>.Ticket) -> Bool {
        let decision: (start: [Waiter], refused: Bool, waits: Bool) = state.withLock { state in
            var start: [Waiter] = []
            if state.waiting.isEmpty && fits(waiter.cost, in: state.statistics) {
                begin(waiter, &state)  // nothing waits ahead of it and it fits: it starts, whatever the queue's bound
                start.append(waiter)
            } else if !state.waiting.append(waiter, with: ticket) {
                state.statistics.refused += 1
                return ([], true, false)
            }
            start += admitted(&state)
            return (start, false, state.waiting.contains(ticket))
        }
        if decision.refused {
            waiter.refuse(.overloaded(reason: "\(limits.maxQueued) images are already waiting to be decoded", retryAfter: retryAfter))
            return false
        }
        decision.start.forEach { $0.start() }
        return decision.waits
    }

    /// Refuses a job still waiting (its deadline passed, or its request ended).
    func expire(_ ticket: WaitQueue<Waiter>.Ticket, reason: String) {
        let waiter: Waiter? = state.withLock { state in
            guard let waiter = state.waiting.remove(ticket) else { return nil }
            state.statistics.refused += 1
            state.statistics.queued = state.waiting.count
            return waiter
        }
        waiter?.refuse(.overloaded(reason: reason, retryAfter: retryAfter))
    }

    /// Gives a finished job's budget back and starts whoever now fits.
    func finish(cost: Int) {
        let next = state.withLock { state in
            state.statistics.running -= 1
            state.statistics.pixelsInFlight -= cost
            state.statistics.completed += 1
            state.statistics.pixelsDecoded += cost
            return admitted(&state)
        }
        next.forEach { $0.start() }
    }

    /// Starts waiting jobs while the next one fits. The next one is the oldest
    /// job of the client whose last job started longest ago (a client never
    /// served first; ties by age): clients take turns. A job that does not fit
    /// is not overtaken — the jobs behind it wait for budget too, so a large
    /// job is never starved by small ones.
    func admitted(_ state: inout State) -> [Waiter] {
        var started: [Waiter] = []
        while let index = nextIndex(state), fits(state.waiting[index].cost, in: state.statistics) {
            let job = state.waiting.remove(at: index)
            begin(job, &state)
            started.append(job)
        }
        // Reservations only once no job waits, so they never hold back the decodes that end them.
        while state.waiting.isEmpty, let reservation = state.reserving.first,
              state.statistics.pixelsInFlight == 0 || state.statistics.pixelsInFlight + reservation.cost <= limits.pixelBudget {
            state.reserving.removeFirst()
            state.statistics.pixelsInFlight += reservation.cost
            state.statistics.pixelsReserved += reservation.cost
            state.statistics.reservationsGranted += 1
            started.append(reservation)
        }
        state.statistics.reservationsWaiting = state.reserving.count
        if state.waiting.isEmpty {
            state.lastStarted.removeAll(keepingCapacity: true)
        } else if state.lastStarted.count > 4 * state.waiting.count + 64 {
            let waitingClients = Set(state.waiting.map(\.client))
            state.lastStarted = state.lastStarted.filter { waitingClients.contains($0.key) }
        }
        state.statistics.queued = state.waiting.count
        return started
    }

    /// Charges a job that starts now: a worker, its pixels, and its client's turn.
    func begin(_ job: Waiter, _ state: inout State) {
        state.starts += 1
        state.lastStarted[job.client] = state.starts
        state.statistics.running += 1
        state.statistics.pixelsInFlight += job.cost
    }

    /// The position in `state.waiting` of the job to start next (``admitted(_:)``).
    func nextIndex(_ state: State) -> Int? {
        var best: (index: Int, lastStarted: Int)?
        var seen = Set<String>()
        for (index, job) in state.waiting.enumerated() where seen.insert(job.client).inserted {
            let last = state.lastStarted[job.client] ?? -1
            if last < best?.lastStarted ?? .max { best = (index, last) }
        }
        return best?.index
    }

    func fits(_ cost: Int, in statistics: Statistics) -> Bool {
        statistics.running < limits.workers && (statistics.running == 0 || statistics.pixelsInFlight + cost <= limits.pixelBudget)
    }

    /// Seconds a refused client should wait: about one queue wait.
    var retryAfter: Int { max(1, Int(limits.maxWait.components.seconds / 2)) }
}

/// A fixed set of threads taking closures from one queue.
final class WorkerThreads: @unchecked Sendable {
    // Guarded by `condition`.
    private var jobs: [@Sendable () -> Void] = []
    private var stopped = false
    private let condition = NSCondition()

    init(count: Int, niceness: Int32) {
        for index in 0..<count {
            OwnThread.start(named: "vsearch-image-\(index)") { [self] in
                WorkerThreads.lowerPriority(to: niceness)
                loop()
            }
        }
    }

    func submit(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    private func loop() {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopped { condition.wait() }
            if jobs.isEmpty && stopped {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job()
        }
    }

    /// On Linux, `nice` is per thread (`setpriority` with who 0 changes only the calling one): lower this one's priority.
    static func lowerPriority(to niceness: Int32) {
        #if os(Linux)
        if niceness > 0 { _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, niceness) }
        #endif
    }
}
