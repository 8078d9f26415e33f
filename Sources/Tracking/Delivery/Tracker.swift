import Foundation

/// Records analytics events so that none is lost: each accepted event is
/// validated, then committed to the durable ``EventQueue`` before
/// ``track(_:)`` returns; a delivery loop sends batches through an
/// ``EventTransport``, removes what the receiver confirmed, drops (and
/// counts, and logs) only what it rejected for good, and backs off on
/// transient failures — connection failures, 408, 429 (honouring
/// `Retry-After`), 5xx — with capped exponential backoff and full jitter.
///
/// A batch refused as a whole is split in halves until the bad event is
/// isolated, so one bad event never blocks or drops its batch-mates. Delivery
/// is at-least-once: a crash between "sent" and "removed" resends the batch,
/// and the receiver deduplicates on each event's `eid`.
///
/// ```swift
/// let tracker = Tracker(queue: try EventQueue(path: ".vsearch/events-queue.sqlite"),
///                       transport: HTTPEventTransport(endpoint: .custom(URL(string: "http://127.0.0.1:8080")!), code: "dev"))
/// await tracker.start()
/// try await tracker.track(.productClick(queryId: reqid, pid: "dress_17", imgUrl: url, pos: 3))
/// await tracker.shutdown()     // stops the loop and tries once more to deliver
/// ```
public actor Tracker {
    /// Delivery settings.
    public struct Configuration: Sendable, Hashable {
        /// Events per request: 50 by default.
        public var batchSize: Int = 50
        /// Seconds between delivery rounds when the queue is quiet: 5 by default.
        public var flushInterval: Double = 5
        /// Waits between failed rounds: 0.5 s base, 60 s cap by default.
        public var backoff = Backoff()

        public init(batchSize: Int = 50, flushInterval: Double = 5, backoff: Backoff = Backoff()) {
            self.batchSize = batchSize
            self.flushInterval = flushInterval
            self.backoff = backoff
        }
    }

    /// What one delivery round or flush did.
    public struct Report: Sendable, Hashable, Codable {
        public var sent = 0
        public var rejected = 0
        /// Events that failed transiently in the last round (still queued).
        public var retried = 0
        /// Events still queued afterwards.
        public var remaining = 0
        /// Reasons for transient failures and rejections, for the log.
        public var problems: [String] = []
        /// A `Retry-After` the server asked for.
        var retryAfter: Double?

        public init() {}

        enum CodingKeys: String, CodingKey { case sent, rejected, retried, remaining, problems }
    }

    public let queue: EventQueue
    let transport: any EventTransport
    public let configuration: Configuration
    let clock: any TrackingClock
    let log: @Sendable (String) -> Void
    var loop: Task<Void, Never>?
    var round: Task<Report, Never>?
    /// Waits taken after failures, for tests and logs.
    public private(set) var backoffHistory: [Double] = []

    /// Creates a tracker; `log` receives one line per rejected event or failed round.
    public init(queue: EventQueue, transport: any EventTransport, configuration: Configuration = Configuration(),
                clock: any TrackingClock = SystemTrackingClock(), log: @escaping @Sendable (String) -> Void = { _ in }) {
        self.queue = queue
        self.transport = transport
        self.configuration = configuration
        self.clock = clock
        self.log = log
    }

    /// Validates the event, fills uid, session, event id and time, and
    /// commits it to the queue. When this returns, the event survives the
    /// process being killed.
    /// - Throws: ``TrackingError/invalidEvent(field:rule:)`` (nothing queued) or ``TrackingError/storage(path:reason:)``.
    @discardableResult
    public func track(_ event: TrackingEvent) throws(TrackingError) -> TrackingEvent {
        try EventValidator.validate(event)
        return try queue.append(event, now: clock.now())
    }

    /// The counters.
    public func counters() throws(TrackingError) -> TrackingCounters {
        try queue.counters()
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
            let entries = try queue.peek(limit: max(1, configuration.batchSize))
            if !entries.isEmpty {
                let uid = entries.first?.event.uid
                var sent: [Int64] = [], rejected: [Int64] = [], retry: [Int64] = []
                await deliver(entries, uid: uid, sent: &sent, rejected: &rejected, retry: &retry, report: &report)
                try queue.markSent(sent)
                try queue.markRejected(rejected)
                try queue.markRetried(retry)
                report.sent = sent.count
                report.rejected = rejected.count
                report.retried = retry.count
            }
            report.remaining = try queue.count()
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
                let line = "dropped event \(entries[0].event.eventID ?? "?") (\(entries[0].event.action)): \(reason)"
                report.problems.append(line)
                log(line)
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
                    let line = "dropped event \(entry.event.eventID ?? "?") (\(entry.event.action)): \(reason)"
                    report.problems.append(line)
                    log(line)
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
                await wait(after: failures, retryAfter: report.retryAfter)
            } else {
                failures = 0
            }
        }
        return total
    }

    func wait(after failures: Int, retryAfter: Double?) async {
        let delay = configuration.backoff.delay(failures: failures, retryAfter: retryAfter)
        backoffHistory.append(delay)
        try? await clock.sleep(seconds: delay)
    }

    /// Starts the background delivery loop (idempotent).
    public func start() {
        guard loop == nil else { return }
        loop = Task { await self.runLoop() }
    }

    func runLoop() async {
        var failures = 0
        while !Task.isCancelled {
            let pending = (try? queue.count()) ?? 0
            if pending == 0 {
                try? await clock.sleep(seconds: configuration.flushInterval)
                continue
            }
            let report = await deliverOnce()
            if report.retried > 0 {
                failures += 1
                log("delivery failed (\(report.problems.first ?? "unknown")); \(report.remaining) queued; retrying")
                await wait(after: failures, retryAfter: report.retryAfter)
            } else {
                failures = 0
                if report.remaining < configuration.batchSize { try? await clock.sleep(seconds: configuration.flushInterval) }
            }
        }
    }

    /// Stops the loop and makes one more attempt to deliver what is queued.
    /// Whatever is not delivered stays queued for the next start.
    @discardableResult
    public func shutdown() async -> Report {
        loop?.cancel()
        loop = nil
        return await flush(maxFailures: 1)
    }
}
