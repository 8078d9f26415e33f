/// Sends one HTTP request and returns the answer, whatever its status. The
/// only I/O of ``HTTPClient``, so a test or an app can put its own stack underneath.
///
/// Implementations enforce the request's idle ``HTTPClientRequest/timeout``,
/// their own size cap and destination rules, and stop at once when the
/// calling task is cancelled. They never retry: ``HTTPClient`` does.
public protocol HTTPTransport: Sendable {
    /// Sends `request` once.
    /// - Returns: the answer, with any status.
    /// - Throws: any ``HTTPClientError``; ``HTTPClientError/cancelled`` when the calling task is cancelled.
    func send(_ request: HTTPClientRequest) async throws(HTTPClientError) -> HTTPClientResponse
}
