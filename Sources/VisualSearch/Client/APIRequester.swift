import Foundation

/// The request loop every client call goes through: build the URL, send,
/// retry transient failures with backoff, check the status, decode.
struct APIRequester: Sendable {
    let baseURL: URL
    let timeout: Double
    let retry: RetryPolicy
    let headers: [(name: String, value: String)]
    let transport: any HTTPTransport
    /// Sleeps between attempts; injectable so tests need not wait.
    let sleep: @Sendable (Double) async throws -> Void

    static let defaultSleep: @Sendable (Double) async throws -> Void = { seconds in
        try await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1e9))
    }

    /// `{base}/{path}?{query}`, the query encoded as the Swift SDK does.
    func url(_ path: String, query: WireQuery) -> URL {
        var text = baseURL.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        text += "/" + path
        let encoded = query.encoded
        if !encoded.isEmpty { text += "?" + encoded }
        return URL(string: text) ?? baseURL
    }

    /// Sends with retries; returns the 2xx answer.
    func send(method: String, path: String, query: WireQuery, body: (contentType: String, bytes: [UInt8])? = nil,
              idempotent: Bool = true) async throws(ClientError) -> HTTPResponse {
        var request = HTTPRequest(method: method, url: url(path, query: query), headers: headers, body: body?.bytes, timeout: timeout)
        if let body { request.headers.append(("Content-Type", body.contentType)) }
        var attempt = 0
        while true {
            attempt += 1
            if Task.isCancelled { throw .cancelled }
            let outcome: Result<HTTPResponse, ClientError>
            do { outcome = .success(try await transport.send(request)) } catch { outcome = .failure(error) }
            let failure: ClientError
            var retryAfter: Double?
            switch outcome {
            case .success(let response) where (200..<300).contains(response.status):
                return response
            case .success(let response):
                failure = .http(status: response.status, url: request.url.absoluteString, message: APIRequester.message(in: response.body))
                retryAfter = RetryPolicy.retryAfter(response.headers["retry-after"])
            case .failure(let error):
                failure = error
            }
            let retryable = idempotent ? failure.isTransient : failure == .transport(url: request.url.absoluteString, reason: "connection refused")
            guard retryable, attempt < retry.maxAttempts,
                  let delay = retry.delay(afterAttempt: attempt, retryAfter: retryAfter) else { throw failure }
            do { try await sleep(delay) } catch { throw .cancelled }
        }
    }

    /// Decodes a 2xx body; a `status: fail` body becomes ``ClientError/api(method:errors:)``.
    func decode<T: Decodable>(_ type: T.Type, from response: HTTPResponse, url: String) throws(ClientError) -> T {
        let object: Any?
        do { object = try JSONSerialization.jsonObject(with: Data(response.body)) } catch {
            throw .decoding(url: url, reason: response.body.isEmpty ? "empty body" : "not JSON (\(response.body.count) bytes)")
        }
        if let dictionary = object as? [String: Any], let status = dictionary["status"] as? String, status.lowercased() == "fail" {
            throw .api(method: dictionary["method"] as? String ?? "", errors: APIRequester.errors(in: dictionary))
        }
        do { return try JSONDecoder().decode(T.self, from: Data(response.body)) } catch {
            throw .decoding(url: url, reason: APIRequester.describe(error))
        }
    }

    /// The service's error text in a failure body: ViSearch's list of
    /// strings, the data API's objects or ProductSearch's `{code, message}`.
    static func message(in body: [UInt8]) -> String? {
        guard let dictionary = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] else { return nil }
        let errors = errors(in: dictionary)
        return errors.isEmpty ? nil : errors.joined(separator: "; ")
    }

    static func errors(in dictionary: [String: Any]) -> [String] {
        switch dictionary["error"] {
        case let list as [String]: return list
        case let list as [[String: Any]]: return list.compactMap { ($0["error_message"] ?? $0["message"]) as? String }
        case let object as [String: Any]: return (object["message"] as? String).map { [$0] } ?? []
        case let text as String: return [text]
        default: return []
        }
    }

    static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, let context):
            "missing \"\(key.stringValue)\" at \(context.codingPath.map(\.stringValue).joined(separator: "."))"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context), DecodingError.dataCorrupted(let context):
            "\(context.debugDescription) at \(context.codingPath.map(\.stringValue).joined(separator: "."))"
        default: "\(error)"
        }
    }
}
