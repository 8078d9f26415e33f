import Foundation
import Prometheus
import ConcurrencyToolkit

/// What `vsearch serve` tells its operators, in the Prometheus text format
/// (version 0.0.4) at `GET /metrics`: the server's families, recorded into a
/// swift-prometheus registry of its own (not a process-wide one, so several
/// servers in one process — tests, an app mounting the routes — keep their
/// numbers apart), then the standard process families (``ProcessMetrics``)
/// read when scraped.
///
/// Every family, with its type, `# HELP` text and labels, is defined once in
/// ``MetricFamily/all`` (MetricFamilies.swift); everything here records
/// through those definitions. `endpoint` is the route's pattern (`/search`,
/// `/images/{name}`…), never the raw path, so its values stay few; unknown
/// paths count as `unmatched`.
public final class ServerMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry
    /// Where procfs is mounted; the process families are left out when it cannot be read there.
    let procfs: String
    /// Totals kept elsewhere (the image pool's), as last added to their counters.
    let lastTotals = Locked<[String: Int]>([:])

    /// Request latency buckets: 1 ms to 30 s.
    static let durationBuckets: [Duration] = [
        .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
        .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5),
        .seconds(10), .seconds(30),
    ]

    /// A registry of its own; the process families from the procfs at `/proc`.
    public convenience init() {
        self.init(procfs: "/proc")
    }

    init(procfs: String) {
        registry = PrometheusCollectorRegistry()
        self.procfs = procfs
    }

    // MARK: - Recording

    /// One answered request.
    func recordRequest(endpoint: String, status: Int, duration: Duration) {
        increment(.httpRequests, labels: [endpoint, String(status)])
        registry.makeDurationHistogram(name: MetricFamily.httpRequestDuration.name,
                                       labels: MetricFamily.httpRequestDuration.dimensions([endpoint]),
                                       buckets: Self.durationBuckets, help: MetricFamily.httpRequestDuration.help)
            .record(duration)
    }

    /// A request refused by its lane's queue or by the body memory (503).
    func recordShed(lane: RequestLane) {
        increment(.httpRequestsShed, labels: [lane.rawValue])
    }

    /// A request refused by its client's limits (429).
    func recordRateLimited(reason: String) {
        increment(.httpRequestsRateLimited, labels: [reason])
    }

    /// A connection closed by the slow-client guard or the connection limit.
    func recordConnectionClosed(reason: String) {
        increment(.connectionsClosed, labels: [reason])
    }

    /// Events the collector stored or refused.
    func recordCollectorEvents(accepted: Int, rejected: Int) {
        if accepted > 0 { increment(.collectorEvents, by: accepted, labels: ["accepted"]) }
        if rejected > 0 { increment(.collectorEvents, by: rejected, labels: ["rejected"]) }
    }

    /// Events of a batch the collector's limits refused whole (`limited`: over a rate; `store_full`: the stored bytes at their cap).
    func recordCollectorRefusal(events: Int, outcome: String) {
        if events > 0 { increment(.collectorEvents, by: events, labels: [outcome]) }
    }

    /// Adds to a counter.
    func increment(_ family: MetricFamily, by amount: Int = 1, labels: [String] = []) {
        precondition(family.kind == .counter, "\(family) is a \(family.kind), not a counter")
        registry.makeCounter(name: family.name, labels: family.dimensions(labels), help: family.help).increment(by: Int64(amount))
    }

    /// Sets a gauge.
    func set(_ family: MetricFamily, _ value: Int, labels: [String] = []) {
        precondition(family.kind == .gauge, "\(family) is a \(family.kind), not a gauge")
        registry.makeGauge(name: family.name, labels: family.dimensions(labels), help: family.help).set(Int64(value))
    }

    /// Sets the gauge called `name`, which must be one of ``MetricFamily/all`` (with `dimensions` its labels, in order).
    func set(_ name: String, _ value: Int, dimensions: [(String, String)] = []) {
        guard let family = MetricFamily.named(name) else { preconditionFailure("\(name) is not a family of MetricFamily.all") }
        precondition(dimensions.map(\.0) == family.labels, "\(name) takes the labels \(family.labels)")
        set(family, value, labels: dimensions.map(\.1))
    }

    /// Brings a counter up to a total kept elsewhere (counters only grow, by what was added since the last scrape).
    func advance(_ family: MetricFamily, to total: Int) {
        let delta = lastTotals.withLock { last -> Int in
            let delta = max(0, total - (last[family.name] ?? 0))
            last[family.name] = max(total, last[family.name] ?? 0)
            return delta
        }
        increment(family, by: delta)  // by 0 too: the counter is listed from the first scrape
    }

    // MARK: - Exposition

    /// The registry, then the process families, in the Prometheus text format (version 0.0.4).
    func render() -> [UInt8] {
        var text = registry.emitToBuffer()
        if let process = try? ProcessMetrics.read(procfs: procfs) {
            text.append(contentsOf: process.exposition.utf8)
        }
        return text
    }
}
