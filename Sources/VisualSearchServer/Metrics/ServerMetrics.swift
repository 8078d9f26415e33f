import CoreMetrics
import Foundation
import Prometheus
import Synchronization

/// What `vsearch serve` tells its operators, in the Prometheus text format
/// at `GET /metrics`: recorded through swift-metrics into a
/// swift-prometheus registry of the server's own (not the process-wide
/// `MetricsSystem`, so several servers in one process — tests, an app
/// mounting the routes — keep their numbers apart).
///
/// | metric | type | labels |
/// |---|---|---|
/// | `vsearch_http_requests_total` | counter | `endpoint`, `status` |
/// | `vsearch_http_request_duration_seconds` | histogram | `endpoint` |
/// | `vsearch_http_requests_in_flight`, `vsearch_http_requests_queued` | gauge | `lane` (`light`, `image`) |
/// | `vsearch_http_requests_shed_total` | counter | `lane` — 503: queue full or waited too long |
/// | `vsearch_http_requests_rate_limited_total` | counter | `reason` (`rate`, `concurrency`) — 429 |
/// | `vsearch_connections_open` | gauge | |
/// | `vsearch_connections_closed_total` | counter | `reason` (`header_timeout`, `body_timeout`, `connection_limit` (503), `client_connection_limit` (429)) |
/// | `vsearch_image_decoded_pixels_total`, `vsearch_image_decodes_total`, `vsearch_image_decodes_refused_total` | counter | |
/// | `vsearch_image_pixels_in_flight`, `vsearch_image_decodes_running`, `vsearch_image_decodes_queued` | gauge | |
/// | `vsearch_catalog_images` | gauge | |
/// | `vsearch_collector_events_total` | counter | `outcome` (`accepted`, `rejected`) |
///
/// `endpoint` is the route's pattern (`/search`, `/images/{name}`…), never
/// the raw path, so its values stay few; unknown paths count as `unmatched`.
public final class ServerMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry
    let factory: PrometheusMetricsFactory
    /// Values read from elsewhere when scraped (the image pool's totals), and the last ones added.
    let lastTotals = Mutex<[String: Int]>([:])

    /// A registry of its own, with latency buckets from 1 ms to 30 s.
    public init() {
        registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
            .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5),
            .seconds(10), .seconds(30),
        ]
        self.factory = factory
    }

    /// One answered request.
    func recordRequest(endpoint: String, status: Int, duration: Duration) {
        Counter(label: "vsearch_http_requests_total", dimensions: [("endpoint", endpoint), ("status", String(status))], factory: factory)
            .increment()
        Timer(label: "vsearch_http_request_duration_seconds", dimensions: [("endpoint", endpoint)], factory: factory)
            .recordNanoseconds(duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
    }

    /// A request refused by its lane's queue (503).
    func recordShed(lane: RequestLane) {
        Counter(label: "vsearch_http_requests_shed_total", dimensions: [("lane", lane.rawValue)], factory: factory).increment()
    }

    /// A request refused by its client's limits (429).
    func recordRateLimited(reason: String) {
        Counter(label: "vsearch_http_requests_rate_limited_total", dimensions: [("reason", reason)], factory: factory).increment()
    }

    /// A connection closed by the slow-client guard or the connection limit.
    func recordConnectionClosed(reason: String) {
        Counter(label: "vsearch_connections_closed_total", dimensions: [("reason", reason)], factory: factory).increment()
    }

    /// Events the collector stored or refused.
    func recordCollectorEvents(accepted: Int, rejected: Int) {
        if accepted > 0 { Counter(label: "vsearch_collector_events_total", dimensions: [("outcome", "accepted")], factory: factory).increment(by: accepted) }
        if rejected > 0 { Counter(label: "vsearch_collector_events_total", dimensions: [("outcome", "rejected")], factory: factory).increment(by: rejected) }
    }

    /// Sets a gauge.
    func set(_ name: String, _ value: Int, dimensions: [(String, String)] = []) {
        Gauge(label: name, dimensions: dimensions, factory: factory).record(value)
    }

    /// Brings a counter up to a total kept elsewhere (counters only grow, by what was added since the last scrape).
    func advance(_ name: String, to total: Int) {
        let delta = lastTotals.withLock { last -> Int in
            let delta = max(0, total - (last[name] ?? 0))
            last[name] = max(total, last[name] ?? 0)
            return delta
        }
        Counter(label: name, factory: factory).increment(by: delta)  // by 0 too: the counter is listed from the first scrape
    }

    /// The registry in the Prometheus text format (version 0.0.4).
    func render() -> [UInt8] {
        registry.emitToBuffer()
    }
}
