// The durable queue and its tracker need GRDB, swift-log and ServiceLifecycle: the `Tracker` package trait (on by default).
#if Tracker
import Foundation
import Tracking
import Logging
import Networking
import ServiceLifecycle

/// Records analytics events so that none is lost: each accepted event is
/// validated, then committed to the durable ``EventQueue`` before
/// ``track(_:)`` returns; a delivery loop sends batches through an
/// ``EventTransport``, removes what the receiver confirmed, drops (and
/// counts, and logs) only what it rejected for good, and backs off on
/// transient failures — connection failures, 408, 429 (honouring
/// `Retry-After`), 5xx — with capped exponential backoff and full jitter
/// (``Configuration/retry``, `RetryPolicy.delivery` by default).
///
/// A batch refused as a whole is split in halves until the bad event is
/// isolated, so one bad event never blocks or drops its batch-mates. Delivery
/// is at-least-once: a crash between "sent" and "removed" resends the batch,
/// and the receiver deduplicates on each event's `eid`.
///
/// A tracker is a ServiceLifecycle `Service` with one lifecycle: ``run()``
/// delivers until graceful shutdown or cancellation, then makes a final
/// delivery attempt; outside a service group, ``whileDelivering(_:)`` runs the
/// same loop for the length of a closure.
/// It logs through swift-log: a warning per dropped event, a notice per
/// failed round, debug lines for delivered rounds.
///
/// ```swift
/// let tracker = Tracker(queue: try EventQueue(path: ".vsearch/events-queue.sqlite"),
///                       transport: HTTPEventTransport(endpoint: .custom(URL(string: "http://127.0.0.1:8080")!), code: "dev"),
///                       logger: Logger(label: "shop.tracking"))
/// let group = ServiceGroup(services: [server, tracker], gracefulShutdownSignals: [.sigterm], logger: logger)
/// try await group.run()        // SIGTERM: the loop stops, queued events get one more try
///
/// // Or for the length of a closure:
/// try await tracker.whileDelivering {
///     try await tracker.track(.productClick(queryId: reqid, pid: "dress_17", imgUrl: url, pos: 3))
/// }                            // the loop stops and queued events get one more try
/// ```
public actor Tracker: Service {
    /// Delivery settings.
    public struct Configuration: Sendable, Hashable {
        /// Events per request: 50 by default.
        public var batchSize: Int = 50
        /// Seconds between delivery rounds when the queue is quiet: 5 by default.
        public var flushInterval: Double = 5
        /// Waits between failed rounds, `RetryPolicy.delivery` by default:
        /// 0.5 s doubling to a 60 s cap with full jitter, `Retry-After` honoured
        /// up to 60 s, never giving up. Its attempts count consecutive failed
        /// rounds: with a finite `maxAttempts` ``flush(maxFailures:)``
        /// stops at whichever limit comes first, and the background loop, which
        /// never gives up, waits the longer of the policy's `maxDelay` and
        /// `maxRetryAfter` and starts a new streak.
        public var retry: RetryPolicy = .delivery

        /// Delivery settings; every parameter has its default.
        public init(batchSize: Int = 50, flushInterval: Double = 5, retry: RetryPolicy = .delivery) {
            self.batchSize = batchSize
            self.flushInterval = flushInterval
            self.retry = retry
        }
    }

    /// What one delivery round or flush did.
    public struct Report: Sendable, Hashable, Codable {
        /// Events the receiver confirmed (removed from the queue).
        public var sent = 0
        /// Events the receiver refused for good (dropped, counted, logged).
        public var rejected = 0
        /// Events that failed transiently in the last round (still queued).
        public var retried = 0
        /// Events still queued afterwards.
        public var remaining = 0
        /// Reasons for transient failures and rejections, for the log.
        public var problems: [String] = []
        /// A `Retry-After` the server asked for.
        var retryAfter: Double?

        /// An empty report.
        public init() {}

        enum CodingKeys: String, CodingKey { case sent, rejected, retried, remaining, problems }
    }

    /// The durable queue events are committed to.
    public let queue: EventQueue
    let transport: any EventTransport
    /// The delivery settings it was made with.
    public let configuration: Configuration
    let clock: any TrackingClock
    /// Where the tracker reports dropped events and failed rounds.
    public nonisolated let logger: Logger
    var round: Task<Report, Never>?
    /// Waits taken after failures, for tests and logs.
    public private(set) var backoffHistory: [Double] = []

    /// Creates a tracker (nothing is sent until ``run()``, ``whileDelivering(_:)`` or ``flush(maxFailures:)``).
    /// - Parameters:
    ///   - queue: the durable queue events are committed to.
    ///   - transport: where batches go.
    ///   - configuration: batch size, flush interval and retry policy; defaults as documented there.
    ///   - clock: time and waiting; the system clock by default.
    ///   - logger: receives a warning per dropped event and a notice per failed round;
    ///     by default a logger labelled `vsearch.tracking` (the process's `LoggingSystem` decides where it writes).
    public init(queue: EventQueue, transport: any EventTransport, configuration: Configuration = Configuration(),
                clock: any TrackingClock = SystemTrackingClock(), logger: Logger = Logger(label: "vsearch.tracking")) {
        self.queue = queue
        self.transport = transport
        self.configuration = configuration
        self.clock = clock
        self.logger = logger
    }

    /// Validates the event, fills uid, session, event id and time, and
    /// commits it to the queue. When this returns, the event survives the
    /// process being killed.
    /// - Throws: ``TrackingError/invalidEvent(field:rule:)`` (nothing queued) or ``TrackingError/storage(path:reason:)``.
    @discardableResult
    public func track(_ event: TrackingEvent) async throws(TrackingError) -> TrackingEvent {
        try EventValidator.validate(event)
        return try await queue.append(event, now: clock.now())
    }

    /// The counters.
    public func counters() async throws(TrackingError) -> TrackingCounters {
        try await queue.counters()
    }

    // MARK: - Delivery

    /// One round: sends up to ``Configuration/batchSize`` of the oldest
    /// events. Rounds never overlap (a second caller waits for the first).
    public func deliverOnce() async -> Report {
        if let round { return await round.value }
        let task = Task { await self.runRound() }
        round = task
        let report = await task.value
        round = nil
        return report
    }

    func runRound() async -> Report {
        var report = Report()
        do {
            let entries = try await queue.peek(limit: max(1, configuration.batchSize))
            if !entries.isEmpty {
                let uid = entries.first?.event.uid
                var sent: [Int64] = [], rejected: [Int64] = [], retry: [Int64] = []
                await deliver(entries, uid: uid, sent: &sent, rejected: &rejected, retry: &retry, report: &report)
                try await queue.markSent(sent)
                try await queue.markRejected(rejected)
                try await queue.markRetried(retry)
                report.sent = sent.count
                report.rejected = rejected.count
                report.retried = retry.count
            }
            report.remaining = try await queue.count()
        } catch {
            report.problems.append(error.description)
            report.retried = max(report.retried, 1)
        }
        return report
    }

    /// Sends, splitting a batch refused as a whole until each refusal is one event.
    func deliver(_ entries: [EventQueue.Entry], uid: String?, sent: inout [Int64], rejected: inout [Int64], retry: inout [Int64],
                 report: inout Report) async {
        switch await transport.send(entries.map(\.event), uid: uid) {
        case .batchRejected(let reason):
            if entries.count == 1 {
                rejected.append(entries[0].sequence)
                report.problems.append(dropped(entries[0].event, reason: reason))
            } else {
                let middle = entries.count / 2
                await deliver(Array(entries[..<middle]), uid: uid, sent: &sent, rejected: &rejected, retry: &retry, report: &report)
                await deliver(Array(entries[middle...]), uid: uid, sent: &sent, rejected: &rejected, retry: &retry, report: &report)
            }
        case .results(let results):
            for (entry, result) in zip(entries, results) {
                switch result {
                case .accepted: sent.append(entry.sequence)
                case .rejected(let reason):
                    rejected.append(entry.sequence)
                    report.problems.append(dropped(entry.event, reason: reason))
                case .retry(let reason, let after):
                    retry.append(entry.sequence)
                    if !report.problems.contains(reason) { report.problems.append(reason) }
                    if let after { report.retryAfter = max(report.retryAfter ?? 0, after) }
                }
            }
            // A transport that answered for fewer events than it was given: the rest are retried.
            for entry in entries.dropFirst(results.count) { retry.append(entry.sequence) }
        }
    }

    /// Logs a dropped event; returns the line for the report.
    func dropped(_ event: TrackingEvent, reason: String) -> String {
        let id = event.eventID ?? "?"
        logger.warning("dropped event \(id) (\(event.action)): \(reason)",
                       metadata: ["event_id": .string(id), "action": .string(event.action.rawValue)])
        return "dropped event \(id) (\(event.action)): \(reason)"
    }

    /// Delivers everything queued now, backing off between failed rounds;
    /// gives up after `maxFailures` consecutive failed rounds (the events stay queued).
    public func flush(maxFailures: Int = 5) async -> Report {
        var total = Report()
        var failures = 0
        while true {
            let report = await deliverOnce()
            total.sent += report.sent
            total.rejected += report.rejected
            total.retried = report.retried
            total.remaining = report.remaining
            total.problems += report.problems.filter { !total.problems.contains($0) }
            if report.remaining == 0 && report.retried == 0 { break }
            if report.retried > 0 {
                failures += 1
                if failures >= maxFailures { break }
                guard let delay = configuration.retry.delay(afterAttempt: failures, retryAfter: report.retryAfter) else { break }
                await wait(delay)
            } else {
                failures = 0
            }
        }
        return total
    }

    /// Waits `delay` seconds after a failed round (recorded in ``backoffHistory``).
    func wait(_ delay: Double) async {
        backoffHistory.append(delay)
        try? await clock.sleep(seconds: delay)
    }

    // MARK: - Running

    /// Runs the delivery loop until graceful shutdown (ServiceLifecycle) or
    /// cancellation, then makes a final delivery attempt. A round in flight when the signal comes is finished, not cut
    /// short; the final attempt runs even after cancellation and ends at its
    /// first failed round (each request bounded by the transport's timeout).
    /// Whatever is not delivered stays queued for the next run.
    public func run() async throws {
        let queued = (try? await queue.count()) ?? 0
        logger.debug("tracker running", metadata: ["queued": .stringConvertible(queued)])
        await cancelWhenGracefulShutdown { await self.deliveryLoop() }
        _ = await finalDelivery()
    }

    /// Runs `body` with the delivery loop beside it, then stops the loop (a
    /// round in flight is finished) and makes one more attempt to deliver what
    /// is queued, as ``run()`` does at shutdown: the same lifecycle for a
    /// caller without a service group, held by a task group rather than a task
    /// left running. Whatever is not delivered stays queued for the next run.
    /// - Returns: what `body` returned; its error is rethrown after the final attempt.
    public nonisolated func whileDelivering<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        let result: Result<T, any Error> = await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.deliveryLoop() }
            defer { group.cancelAll() }
            do { return .success(try await body()) } catch { return .failure(error) }
        }
        _ = await finalDelivery()
        return try result.get()
    }

    /// One more attempt, in a task of its own so that the caller's cancellation does not cut it short.
    func finalDelivery() async -> Report {
        let report = await Task { await self.flush(maxFailures: 1) }.value
        if report.remaining > 0 {
            logger.notice("tracker stopped with events still queued", metadata: [
                "queued": .stringConvertible(report.remaining), "reason": .string(report.problems.first ?? "unknown"),
            ])
        }
        return report
    }

    /// Delivers until the task is cancelled: a round whenever events are
    /// queued, ``Configuration/flushInterval`` between quiet rounds, backoff after failed ones.
    func deliveryLoop() async {
        var failures = 0
        while !Task.isCancelled {
            let pending = (try? await queue.count()) ?? 0
            if pending == 0 {
                try? await clock.sleep(seconds: configuration.flushInterval)
                continue
            }
            let report = await deliverOnce()
            if report.retried > 0 {
                failures += 1
                let retry = configuration.retry
                let delay = retry.delay(afterAttempt: failures, retryAfter: report.retryAfter)
                let wait = delay ?? max(retry.maxDelay, retry.maxRetryAfter)
                if delay == nil { failures = 0 }
                logger.notice("delivery failed; retrying", metadata: [
                    "reason": .string(report.problems.first ?? "unknown"), "queued": .stringConvertible(report.remaining),
                    "wait": .stringConvertible(wait),
                ])
                await self.wait(wait)
            } else {
                failures = 0
                logger.debug("delivered", metadata: [
                    "sent": .stringConvertible(report.sent), "rejected": .stringConvertible(report.rejected),
                    "queued": .stringConvertible(report.remaining),
                ])
                if report.remaining < configuration.batchSize { try? await clock.sleep(seconds: configuration.flushInterval) }
            }
        }
    }
}
#endif
