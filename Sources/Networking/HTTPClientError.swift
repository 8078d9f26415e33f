/// Why an HTTP exchange produced no response. Every `url` is already
/// redacted with ``Redaction``, so an error can be logged or
/// shown as it is.
///
/// ```swift
/// do { _ = try await client.send(request) }
/// catch where error.isTransient { /* the network; try later */ }
/// catch .destinationRefused(let url, let reason) { print("not fetching \(url): \(reason)") }
/// catch { print(error) }
/// ```
public enum HTTPClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The exchange failed on the way: DNS, a reset connection, TLS, a body cut short.
    /// The server may have seen the request.
    case transport(url: String, reason: String)
    /// The connection was refused: the server certainly never saw the request,
    /// so even a request that is not idempotent may be sent again.
    case connectionRefused(url: String)
    /// Nothing moved for `seconds` (no connection, no byte): the request was abandoned.
    case timeout(url: String, seconds: Double)
    /// The answer was larger than `limit` bytes; it was abandoned as it arrived, never buffered whole.
    case responseTooLarge(url: String, limit: Int)
    /// The ``DestinationPolicy`` refused the URL or a redirect's target: nothing was sent there.
    case destinationRefused(url: String, reason: String)
    /// The server redirected more than `limit` times.
    case tooManyRedirects(url: String, limit: Int)
    /// The calling task was cancelled.
    case cancelled

    /// Whether trying again later may succeed: transport failures, refused connections and timeouts.
    public var isTransient: Bool {
        switch self {
        case .transport, .connectionRefused, .timeout: true
        case .responseTooLarge, .destinationRefused, .tooManyRedirects, .cancelled: false
        }
    }

    /// One line for a log or a terminal.
    public var description: String {
        switch self {
        case .transport(let url, let reason): "cannot reach \(url): \(reason)"
        case .connectionRefused(let url): "cannot reach \(url): connection refused"
        case .timeout(let url, let seconds): "\(url) did not answer within \(Self.format(seconds)) s"
        case .responseTooLarge(let url, let limit): "\(url) answered with more than \(limit) bytes; abandoned"
        case .destinationRefused(let url, let reason): "refused to connect to \(url): \(reason)"
        case .tooManyRedirects(let url, let limit): "\(url) redirected more than \(limit) times"
        case .cancelled: "cancelled"
        }
    }

    /// `10` rather than `10.0`; fractions kept.
    static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() && abs(seconds) < 1e15 ? String(Int(seconds)) : String(seconds)
    }
}
