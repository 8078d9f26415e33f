import Networking

/// Why a client call failed. Transport failures, HTTP statuses and API-level
/// `status: fail` answers are distinct cases, so callers can tell "the
/// network is down" from "the key is wrong" from "the image was not found".
/// URLs in errors have their secrets redacted (``Redaction``).
///
/// ```swift
/// do { _ = try await client.search(SearchRequest(imageName: "x")) }
/// catch .http(let status, _, let message) where status == 401 { print("check the key:", message ?? "") }
/// catch { print(error) }
/// ```
public enum ClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The request never got an answer: connection refused or reset, DNS, TLS, a body cut short, a refused redirect.
    case transport(url: String, reason: String)
    /// No answer within the configured timeout.
    case timeout(url: String, seconds: Double)
    /// A non-2xx answer; `message` is the service's own error text when the body had one.
    case http(status: Int, url: String, message: String?)
    /// A 2xx answer whose body says `status: fail`, with its error list.
    case api(method: String, errors: [String])
    /// The body is not the JSON the endpoint answers with.
    case decoding(url: String, reason: String)
    /// The answer exceeded the configured maximum size and was abandoned.
    case responseTooLarge(url: String, limit: Int)
    /// The request could not be built (bad image, bad parameter); nothing was sent.
    case invalidRequest(String)
    /// The calling task was cancelled.
    case cancelled

    /// The client's view of a failure of the HTTP layer.
    public init(_ error: HTTPClientError) {
        switch error {
        case .transport(let url, let reason): self = .transport(url: url, reason: reason)
        case .connectionRefused(let url): self = .transport(url: url, reason: "connection refused")
        case .timeout(let url, let seconds): self = .timeout(url: url, seconds: seconds)
        case .responseTooLarge(let url, let limit): self = .responseTooLarge(url: url, limit: limit)
        case .destinationRefused(let url, let reason): self = .transport(url: url, reason: reason)
        case .tooManyRedirects(let url, let limit): self = .transport(url: url, reason: "more than \(limit) redirects")
        case .cancelled: self = .cancelled
        }
    }

    /// Whether trying again may succeed (transport failures, timeouts, 408, 429, 5xx).
    public var isTransient: Bool {
        switch self {
        case .transport, .timeout: true
        case .http(let status, _, _): RetryPolicy.isRetryable(status: status)
        default: false
        }
    }

    public var description: String {
        switch self {
        case .transport(let url, let reason): "cannot reach \(url): \(reason)"
        case .timeout(let url, let seconds): "\(url) did not answer within \(seconds) s"
        case .http(let status, let url, let message):
            "\(url) answered HTTP \(status)" + (message.map { ": \($0)" } ?? "") + (status == 401 ? " (check the app key or access key and secret)" : "")
        case .api(let method, let errors): "\(method) failed: " + (errors.isEmpty ? "no reason given" : errors.joined(separator: "; "))
        case .decoding(let url, let reason): "\(url) answered with an unexpected body: \(reason)"
        case .responseTooLarge(let url, let limit): "\(url) answered with more than \(limit) bytes; abandoned"
        case .invalidRequest(let reason): "invalid request: \(reason)"
        case .cancelled: "cancelled"
        }
    }
}
