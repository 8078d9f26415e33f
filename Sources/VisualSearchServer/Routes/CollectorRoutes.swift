import Foundation
import Hummingbird
import Tracking
import VisualSearch
import ConcurrencyToolkit

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
///
/// And it takes no more than ``CollectorLimits`` allow: events a second per
/// address and in all, event bytes per address an hour (429 with
/// `Retry-After` beyond), event bytes stored in all (507 with `Retry-After`).
/// A batch is charged whole before anything is stored: refused, none of it is.
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
    /// What it takes in, per address and in all.
    let limiter: CollectorLimiter
    /// Where a client's address is read: the trusted proxy's header (``ClientLimits/addressHeader``), if any.
    let addressSource: ClientLimits
    /// Events one `POST /v3/events` may carry: 500 (the SDKs send a few dozen at most).
    public static let maxEventsPerBatch = 500

    /// Stores into `store` within `limits` (none unless given), counting an
    /// address as `addressHeader`'s last entry when set (a trusted proxy's)
    /// and otherwise the peer; counts events into `metrics` when given;
    /// `now` is the clock `ts` is checked against, `clock` the one the limits' buckets refill by.
    public init(store: any CollectorStore, settings: EndpointSettings, metrics: ServerMetrics? = nil,
                limits: CollectorLimits = .unlimited, addressHeader: String? = nil, clock: any Clock<Duration> = ContinuousClock(),
                now: @escaping @Sendable () -> Date = { Date() }) {
        self.store = store
        endpoint = EndpointFrame(settings: settings)
        self.metrics = metrics
        self.now = now
        limiter = CollectorLimiter(limits: limits, clock: ElapsedClock(clock))
        addressSource = ClientLimits(addressHeader: addressHeader)
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
            let requestID = context.requestID, address = self.address(of: request, context: context)
            return await endpoint.run(request, context: context, family: .tracking, method: "events", authenticated: false,
                                      maxBodyBytes: Self.maxBatchBytes) { parameters throws(ServerError) in
                let entries: [[String: String]]
                do throws(TrackingError) { entries = try EventWireFormat.entries(fromBatch: parameters.rawBody ?? []) } catch {
                    throw .engine(.invalidParameter(name: "body", reason: error.description))
                }
                guard entries.count <= Self.maxEventsPerBatch else {
                    throw .service(status: 413, message: "\(entries.count) events in one batch is over the limit of \(Self.maxEventsPerBatch); send them in several batches")
                }
                // Counted, not yet decoded: a batch over a rate is refused before its events are measured.
                if let refusal = limiter.refusalBeforeDecoding(address: address, events: entries.count) { try refuse(refusal, events: entries.count) }
                return BatchAnswer(reqid: requestID, result: try await receive(entries, from: address))
            }
        }
        router.get("v3/__va.gif") { request, context in
            let requestID = context.requestID, address = self.address(of: request, context: context)
            return await endpoint.run(request, context: context, family: .tracking, method: "__va.gif", authenticated: false) { parameters throws(ServerError) in
                var values: [String: String] = [:]
                for item in parameters.query.items { values[item.name] = item.value }
                let result = try await receive([values], from: address)[0]
                guard result.code == 0 else { throw .engine(.invalidParameter(name: "event", reason: result.message)) }
                return PixelAnswer(reqid: requestID)
            }
        }
    }

    /// The key `request` is limited by (``CollectorLimiter/addressKey(_:)``).
    func address<Context: VisualSearchRequestContext>(of request: Request, context: Context) -> String {
        CollectorLimiter.addressKey(ClientIdentity.address(of: request, remoteAddress: context.remoteAddress,
                                                           limits: addressSource))
    }

    /// Charges a batch of `events` entries whose events take `bytes` stored,
    /// from `address`, to the limits — or throws 429, 507 or 413, and nothing of it is stored.
    func admit(events: Int, bytes: Int, from address: String) async throws(ServerError) {
        if limiter.claimStoredBytesReading() {
            do throws(TrackingError) { limiter.setStoredBytes(try await store.storedEventBytes()) } catch {
                limiter.setStoredBytes(nil)
                throw .eventStore(error)
            }
        }
        try refuse(limiter.admit(address: address, events: events, bytes: bytes), events: events)
    }

    /// Throws the answer to a batch of `events` events that `decision` refuses (429, 507 or 413); returns when it is admitted.
    func refuse(_ decision: CollectorLimiter.Decision, events: Int) throws(ServerError) {
        switch decision {
        case .admitted:
            return
        case .rateLimited(let reason, let retryAfter):
            metrics?.recordRateLimited(reason: "collector")
            metrics?.recordCollectorRefusal(events: events, outcome: "limited")
            throw .rateLimited(reason: reason + "; nothing of this batch was stored", retryAfter: retryAfter)
        case .storeFull(let stored, let limit):
            metrics?.recordCollectorRefusal(events: events, outcome: "store_full")
            throw .storageFull(reason: "the collector holds \(stored) bytes of events, its limit is \(limit) (vsearch serve --collector-max-mb); "
                               + "nothing of this batch was stored", retryAfter: Int(CollectorLimiter.storedRereadInterval.components.seconds))
        case .tooLarge(let reason):
            throw .service(status: 413, message: reason)
        }
    }

    /// Decodes entries (a malformed one is rejected alone), charges the batch
    /// from `address` to the limits — whole, or nothing of it is stored — and stores it.
    func receive(_ entries: [[String: String]], from address: String) async throws(ServerError) -> [CollectorResult] {
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
        let sizes = events.map(\.storedByteCount)
        try await admit(events: entries.count, bytes: sizes.reduce(0, +), from: address)
        let stored: [CollectorResult]
        do throws(TrackingError) { stored = try await store.receive(events) } catch {
            limiter.returnUnstored(bytes: sizes.reduce(0, +))
            throw .eventStore(error)
        }
        limiter.returnUnstored(bytes: zip(sizes, stored).reduce(0) { $0 + ($1.1.code == 0 ? 0 : $1.0) })
        for (position, result) in zip(positions, stored) { results[position] = result }
        let answered = results.map { $0 ?? .accepted }
        let accepted = answered.filter { $0.code == 0 }.count
        metrics?.recordCollectorEvents(accepted: accepted, rejected: answered.count - accepted)
        return answered
    }
}
