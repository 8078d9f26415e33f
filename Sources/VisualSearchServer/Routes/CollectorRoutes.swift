import Foundation
import Hummingbird
import Tracking
import VisualSearch

/// The local analytics collector: the hosted tracker's endpoints, stored in
/// the catalog database (deduplicated by event id) for `vsearch events stats`.
///
/// - `POST /v3/events?code=…` — a batch `{"events":[…]}`; the answer has one
///   `{"code":…,"message":…}` per event (0 = stored or already stored).
/// - `GET /v3/__va.gif?…` — one event; answered with `{"status":"OK"}`
///   (the SDKs never read a success body).
///
/// Like the hosted tracker, the collector needs no key: events carry a `code`.
/// So it takes nothing it cannot show: each event passes ``EventValidator``
/// (URLs included) and its `ts` lies between 2000 and an hour ahead of the
/// collector's clock (``EventValidator/validateTimestamp(_:now:)``); a batch
/// holds at most ``maxEventsPerBatch`` events and ``maxBatchBytes`` of body (413 beyond).
public struct CollectorRoutes: Sendable {
    /// The largest batch body: 1 MiB (a tracker's batch is a few KiB of JSON).
    public static let maxBatchBytes = 1 << 20
    /// Where batches are posted.
    static let batchPath = "/v3/events"

    public let store: any CollectorStore
    let endpoint: EndpointFrame
    let metrics: ServerMetrics?
    /// The collector's clock, for the timestamp window.
    let now: @Sendable () -> Date
    /// Events one `POST /v3/events` may carry: 500 (the SDKs send a few dozen at most).
    public static let maxEventsPerBatch = 500

    /// Stores into `store`; counts events into `metrics` when given; `now` is the clock `ts` is checked against.
    public init(store: any CollectorStore, settings: EndpointSettings, metrics: ServerMetrics? = nil,
                now: @escaping @Sendable () -> Date = { Date() }) {
        self.store = store
        endpoint = EndpointFrame(settings: settings)
        self.metrics = metrics
        self.now = now
    }

    struct BatchAnswer: Encodable, Sendable {
        var status = "OK"
        var reqid: String
        var result: [CollectorResult]
    }

    struct PixelAnswer: Encodable, Sendable {
        var status = "OK"
        var reqid: String
    }

    /// Adds `POST /v3/events` and `GET /v3/__va.gif` to `router`.
    public func register<Context: VisualSearchRequestContext>(on router: Router<Context>) {
        router.post(RouterPath(Self.batchPath)) { request, context in
            let requestID = context.requestID
            return await endpoint.run(request, context: context, family: .tracking, method: "events", authenticated: false,
                                      maxBodyBytes: Self.maxBatchBytes) { parameters throws(ServerError) in
                let entries: [[String: String]]
                do throws(TrackingError) { entries = try EventWireFormat.entries(fromBatch: parameters.rawBody ?? []) } catch {
                    throw .engine(.invalidParameter(name: "body", reason: error.description))
                }
                guard entries.count <= Self.maxEventsPerBatch else {
                    throw .service(status: 413, message: "\(entries.count) events in one batch is over the limit of \(Self.maxEventsPerBatch); send them in several batches")
                }
                return BatchAnswer(reqid: requestID, result: try await receive(entries))
            }
        }
        router.get("v3/__va.gif") { request, context in
            let requestID = context.requestID
            return await endpoint.run(request, context: context, family: .tracking, method: "__va.gif", authenticated: false) { parameters throws(ServerError) in
                var values: [String: String] = [:]
                for item in parameters.query.items { values[item.name] = item.value }
                let result = try await receive([values])[0]
                guard result.code == 0 else { throw .engine(.invalidParameter(name: "event", reason: result.message)) }
                return PixelAnswer(reqid: requestID)
            }
        }
    }

    /// Decodes and stores entries; a malformed entry is rejected alone.
    func receive(_ entries: [[String: String]]) async throws(ServerError) -> [CollectorResult] {
        var results = [CollectorResult?](repeating: nil, count: entries.count)
        var events: [TrackingEvent] = []
        var positions: [Int] = []
        let now = self.now()
        for (index, entry) in entries.enumerated() {
            do throws(TrackingError) {
                let event = try EventWireFormat.event(from: entry)
                try EventValidator.validateTimestamp(event, now: now)
                events.append(event)
                positions.append(index)
            } catch {
                results[index] = CollectorResult(code: 400, message: error.description)
            }
        }
        let stored: [CollectorResult]
        do throws(TrackingError) { stored = try await store.receive(events) } catch {
            throw .engine(.storage(reason: error.description, sql: nil))
        }
        for (position, result) in zip(positions, stored) { results[position] = result }
        let answered = results.map { $0 ?? .accepted }
        let accepted = answered.filter { $0.code == 0 }.count
        metrics?.recordCollectorEvents(accepted: accepted, rejected: answered.count - accepted)
        return answered
    }
}
