import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// ``EventTransport`` over HTTP (URLSession; FoundationNetworking on Linux).
///
/// - ``Mode/batch``: `POST {base}/v3/events?code=…` with the JSON batch body
///   (Android's batch endpoint, and `vsearch serve`'s collector); per-event
///   results come from the response's `result` list.
/// - ``Mode/pixel``: one `GET {base}/v3/__va.gif?…` per event, as the hosted
///   tracker's iOS and JS SDKs send.
///
/// Status handling: 2xx accepted; 408, 429 (with `Retry-After`) and 5xx, and
/// connection failures, are retried; 401, 403 and 404 are retried too (a
/// wrong code or URL is a configuration problem — dropping every event for it
/// would lose them all); other 4xx reject (a batch is split to find the culprit).
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

        public var baseURL: URL {
            switch self {
            case .world: URL(string: "https://multimodal.analytics.data.rezolve.com")!
            case .china: URL(string: "https://analytics.visenze.com.cn")!
            case .custom(let url): url
            }
        }
    }

    public enum Mode: Sendable, Hashable {
        case batch
        case pixel
    }

    public let endpoint: Endpoint
    /// The tracker code (`app_key:placement_id` for ProductSearch).
    public let code: String
    public let mode: Mode
    /// Seconds before a request fails: 10 by default.
    public let timeout: Double
    let session: URLSession

    public init(endpoint: Endpoint, code: String, mode: Mode = .batch, timeout: Double = 10) {
        self.endpoint = endpoint
        self.code = code
        self.mode = mode
        self.timeout = timeout
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = timeout * 3
        session = URLSession(configuration: configuration)
    }

    func url(_ path: String, query: String) -> URL {
        var text = endpoint.baseURL.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        return URL(string: text + path + "?" + query) ?? endpoint.baseURL
    }

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
    static func classify(_ status: Int, headers: [String: String], body: [UInt8]) -> DeliveryResult? {
        if (200..<300).contains(status) { return nil }
        let message = (try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
            .flatMap { ($0["error"] as? [String: Any])?["message"] as? String ?? ($0["error"] as? [String])?.first }
        let reason = "HTTP \(status)" + (message.map { ": \($0)" } ?? "")
        if status == 408 || status == 429 || status >= 500 || status == 401 || status == 403 || status == 404 {
            return .retry(reason: reason, retryAfter: headers["retry-after"].flatMap { Double($0.trimmingCharacters(in: .whitespaces)) })
        }
        return .rejected(reason: reason)
    }

    func request(_ url: URL, body: [UInt8]?) async -> (Int, [String: String], [UInt8], String?) {
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        request.setValue("vsearch-tracking/\(EventWireFormat.version)", forHTTPHeaderField: "User-Agent")
        if let body {
            request.httpMethod = "POST"
            request.httpBody = Data(body)
            request.setValue("application/json; charset=UTF-8", forHTTPHeaderField: "Content-Type")
        }
        do {
            let (data, response) = try await session.data(for: request)
            guard let http = response as? HTTPURLResponse else { return (0, [:], [], "no HTTP response") }
            var headers: [String: String] = [:]
            for (key, value) in http.allHeaderFields {
                if let key = key as? String, let value = value as? String { headers[key.lowercased()] = value }
            }
            return (http.statusCode, headers, [UInt8](data), nil)
        } catch {
            return (0, [:], [], "cannot reach \(url.host ?? url.absoluteString): \(error.localizedDescription)")
        }
    }
}
