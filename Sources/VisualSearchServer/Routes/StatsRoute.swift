import Foundation
import Hummingbird
import Tracking
import VisualSearch

/// `GET /v3/stats?since=24h&limit=20&bucket=3600`: what the collector has
/// seen — `vsearch events stats --json` (views, clicks, CTR and conversion
/// per query and per product) plus the events over time in buckets of
/// `bucket` seconds — for the analytics page. Keys as for search: unlike
/// the collector's intake, statistics are the shop's own data.
public struct StatsRoute: Sendable {
    public let store: any CollectorStore
    let endpoint: EndpointFrame

    public init(store: any CollectorStore, settings: EndpointSettings) {
        self.store = store
        endpoint = EndpointFrame(settings: settings)
    }

    struct Body: Encodable, Sendable {
        var status = "OK"
        var since: Int64?
        var stats: EventStats
        var timeline: EventTimeline
        var reqid: String

        func encode(to encoder: any Encoder) throws {
            try stats.encode(to: encoder)  // total, actions, queries, products at the top, as `events stats --json`
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(status, forKey: .status)
            try container.encodeIfPresent(since, forKey: .since)
            try container.encode(timeline.bucketSeconds, forKey: .bucketSeconds)
            try container.encode(timeline.buckets, forKey: .timeline)
            try container.encode(reqid, forKey: .reqid)
        }

        enum Keys: String, CodingKey {
            case status, since, bucketSeconds = "bucket_seconds", timeline, reqid
        }
    }

    /// Adds `GET /v3/stats` to `router`.
    public func register<Context: VisualSearchRequestContext>(on router: Router<Context>) {
        router.get("v3/stats") { request, context in
            let requestID = context.requestID
            return await endpoint.run(request, context: context, family: .tracking, method: "stats") { parameters throws(ServerError) in
                var since: Date?
                if let text = parameters.query.first("since"), !text.isEmpty, text != "all" {
                    guard let start = StatsWindow.start(text, now: Date()) else {
                        throw .engine(.invalidParameter(name: "since", reason: "\"\(text)\" is not all, \(StatsWindow.forms)"))
                    }
                    since = start
                }
                let limit = try CatalogRoute.integer(parameters.query.first("limit"), name: "limit", default: 20, range: 1...1000)
                let bucket = try CatalogRoute.integer(parameters.query.first("bucket"), name: "bucket", default: 3600, range: 60...31_536_000)
                do throws(TrackingError) {
                    return Body(since: since.map { Int64($0.timeIntervalSince1970 * 1000) },
                                stats: try await store.stats(since: since, limit: limit),
                                timeline: try await store.timeline(since: since, bucketSeconds: bucket), reqid: requestID)
                } catch {
                    throw .eventStore(error)
                }
            }
        }
    }
}
