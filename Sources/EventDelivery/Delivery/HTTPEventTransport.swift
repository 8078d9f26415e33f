import Foundation
import Tracking
import Networking

/// ``EventTransport`` over HTTP, through the project's one HTTP layer
/// (`Networking`'s `HTTPClient` over a `URLSessionTransport` by default:
/// idle timeout, a 1 MiB cap on answers, typed errors, redacted URLs).
///
/// - ``Mode/batch``: `POST {base}/v3/events?code=…` with the JSON batch body
///   (Android's batch endpoint, and `vsearch serve`'s collector); per-event
///   results come from the response's `result` list.
/// - ``Mode/pixel``: one `GET {base}/v3/__va.gif?…` per event, as the hosted
///   tracker's iOS and JS SDKs send.
///
/// Status handling: 2xx accepted; 408, 429 (with `Retry-After`, in seconds
/// or as an HTTP-date) and 5xx, and connection failures, are retried; 401,
/// 403 and 404 are retried too (a wrong code or URL is a configuration
/// problem — dropping every event for it would lose them all); other 4xx
/// reject (a batch is split to find the culprit).
///
/// Each call makes one attempt per request (`RetryPolicy.none`): the
/// ``Tracker``'s rounds do the retrying, with its own backoff.
///
/// ```swift
/// let transport = HTTPEventTransport(endpoint: .world, code: "APP_KEY:1", mode: .pixel)
/// let local = HTTPEventTransport(endpoint: .custom(URL(string: "http://127.0.0.1:8080")!), code: "dev")
/// ```
public struct HTTPEventTransport: EventTransport {
    /// Where events go.
    public enum Endpoint: Sendable, Hashable {
        /// `https://multimodal.analytics.data.rezolve.com`.
        case world
        /// `https://analytics.visenze.com.cn`.
        case china
        /// Any base URL, e.g. a local `vsearch serve`.
        case custom(URL)

        /// The base URL requests are made under.
        public var baseURL: URL {
            switch self {
            case .world: URL(string: "https://multimodal.analytics.data.rezolve.com")!
            case .china: URL(string: "https://analytics.visenze.com.cn")!
            case .custom(let url): url
            }
        }
    }

    /// How events are sent.
    public enum Mode: Sendable, Hashable {
        /// `POST {base}/v3/events?code=…` with a JSON batch; per-event results.
        case batch
        /// One `GET {base}/v3/__va.gif?…` per event.
        case pixel
    }

    /// Where events go.
    public let endpoint: Endpoint
    /// The tracker code (`app_key:placement_id` for ProductSearch).
    public let code: String
    /// ``Mode/batch`` or ``Mode/pixel``.
    public let mode: Mode
    /// Seconds without progress before a request fails: 10 by default.
    public let timeout: Double
    /// Sends each request once.
    let client: HTTPClient

    /// Largest answer read from the endpoint: 1 MiB (a batch's per-event results are a few bytes each).
    public static let maxResponseBytes = 1 << 20

    /// A transport to `endpoint`.
    /// - Parameters:
    ///   - endpoint: where events go.
    ///   - code: the tracker code.
    ///   - mode: ``Mode/batch`` by default.
    ///   - timeout: idle seconds per request, 10 by default.
    ///   - transport: the HTTP stack; by default a `URLSessionTransport` capped at ``maxResponseBytes``
    ///     with unrestricted destinations (the endpoint is the operator's own choice).
    public init(endpoint: Endpoint, code: String, mode: Mode = .batch, timeout: Double = 10, transport: (any HTTPTransport)? = nil) {
        self.endpoint = endpoint
        self.code = code
        self.mode = mode
        self.timeout = timeout
        client = HTTPClient(transport: transport ?? URLSessionTransport(maxResponseBytes: Self.maxResponseBytes), retry: .none)
    }

    func url(_ path: String, query: String) -> URL {
        var text = endpoint.baseURL.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        return URL(string: text + path + "?" + query) ?? endpoint.baseURL
    }

    /// Sends `events` (one request per batch, or one per event in pixel mode), one attempt each.
    public func send(_ events: [TrackingEvent], uid: String?) async -> BatchOutcome {
        switch mode {
        case .batch: return await sendBatch(events, uid: uid)
        case .pixel:
            var results: [DeliveryResult] = []
            for event in events {
                let (status, headers, body, failure) = await request(url("/v3/__va.gif", query: EventWireFormat.query(event, code: code)), body: nil)
                if let failure { results.append(.retry(reason: failure, retryAfter: nil)); continue }
                results.append(HTTPEventTransport.classify(status, headers: headers, body: body) ?? .accepted)
            }
            return .results(results)
        }
    }

    func sendBatch(_ events: [TrackingEvent], uid: String?) async -> BatchOutcome {
        let query = "code=" + EventWireFormat.escape(code)
        let (status, headers, body, failure) = await request(url("/v3/events", query: query), body: EventWireFormat.batchBody(events, uid: uid))
        if let failure { return .results(events.map { _ in .retry(reason: failure, retryAfter: nil) }) }
        if let problem = HTTPEventTransport.classify(status, headers: headers, body: body) {
            if case .rejected(let reason) = problem { return .batchRejected(reason: reason) }
            return .results(events.map { _ in problem })
        }
        // Per-event results: {"result":[{"code":0,"message":""}, …]}; none means all accepted.
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
              let list = object["result"] as? [[String: Any]], list.count == events.count else {
            return .results(events.map { _ in .accepted })
        }
        return .results(list.map { entry in
            let code = (entry["code"] as? NSNumber)?.intValue ?? 0
            return code == 0 ? .accepted : .rejected(reason: "code \(code): \(entry["message"] as? String ?? "rejected")")
        })
    }

    /// nil for 2xx; otherwise what the status means for the event(s).
    /// `Retry-After` is read relative to `now` (seconds or an HTTP-date).
    static func classify(_ status: Int, headers: [String: String], body: [UInt8], now: Date = Date()) -> DeliveryResult? {
        if (200..<300).contains(status) { return nil }
        let message = (try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
            .flatMap { ($0["error"] as? [String: Any])?["message"] as? String ?? ($0["error"] as? [String])?.first }
        let reason = "HTTP \(status)" + (message.map { ": \($0)" } ?? "")
        if status == 408 || status == 429 || status >= 500 || status == 401 || status == 403 || status == 404 {
            return .retry(reason: reason, retryAfter: RetryPolicy.retryAfter(headers["retry-after"], now: now))
        }
        return .rejected(reason: reason)
    }

    /// One attempt: status, headers and body, or why there was no answer.
    func request(_ url: URL, body: [UInt8]?) async -> (Int, [String: String], [UInt8], String?) {
        var request = HTTPClientRequest(url: url, headers: [("User-Agent", "vsearch-tracking/\(EventWireFormat.version)")], timeout: timeout)
        if let body {
            request.method = "POST"
            request.body = body
            request.headers.append(("Content-Type", "application/json; charset=UTF-8"))
        }
        do {
            let response = try await client.send(request)
            return (response.status, response.headers, response.body, nil)
        } catch {
            return (0, [:], [], describe(error))
        }
    }

    /// A failure in a few words for the report and the log: the endpoint's
    /// host rather than the whole (event-carrying) URL, so repeated failures read the same.
    func describe(_ error: HTTPClientError) -> String {
        let base = endpoint.baseURL
        let host = (base.host ?? base.absoluteString) + (base.port.map { ":\($0)" } ?? "")
        switch error {
        case .transport(_, let reason): return "cannot reach \(host): \(reason)"
        case .connectionRefused: return "cannot reach \(host): connection refused"
        case .timeout(_, let seconds):
            return "\(host) did not answer within \(seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)) s"
        case .responseTooLarge(_, let limit): return "\(host) answered with more than \(limit) bytes"
        case .destinationRefused(_, let reason): return "refused to connect to \(host): \(reason)"
        case .tooManyRedirects(_, let limit): return "\(host) redirected more than \(limit) times"
        case .cancelled: return "cancelled"
        }
    }
}
