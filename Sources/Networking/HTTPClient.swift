import Foundation

/// The project's one request loop: sends through an ``HTTPTransport`` and
/// retries per a ``RetryPolicy``.
///
/// - Transient failures (``HTTPClientError/isTransient``) and retryable
///   statuses (408, 429, 5xx; see ``RetryPolicy/isRetryable(status:)``) are
///   retried, honouring `Retry-After`.
/// - A request that is not idempotent (an insert, an upload with side
///   effects) is retried only after ``HTTPClientError/connectionRefused(url:)``,
///   when the server certainly never saw it.
/// - Any other answer is returned as it is: the caller decides what a 4xx means.
///
/// ```swift
/// let client = HTTPClient(retry: .default)
/// let response = try await client.send(HTTPClientRequest(url: url))
/// let images = HTTPClient(transport: URLSessionTransport(maxResponseBytes: 16 << 20, destinationPolicy: .publicOnly))
/// let bytes = try await images.fetch(imageURL, timeout: 5)
/// ```
public struct HTTPClient: Sendable {
    /// What requests go through.
    public let transport: any HTTPTransport
    /// When to try again.
    public let retry: RetryPolicy
    /// Waits between attempts; throws when the waiting task is cancelled.
    let sleep: @Sendable (Double) async throws -> Void

    /// A client.
    /// - Parameters:
    ///   - transport: a fresh ``URLSessionTransport`` (32 MiB cap, unrestricted destinations) by default.
    ///   - retry: ``RetryPolicy/default`` by default.
    ///   - sleep: waits between attempts; ``defaultSleep`` by default, injectable so tests need not wait.
    public init(transport: any HTTPTransport = URLSessionTransport(), retry: RetryPolicy = .default,
                sleep: @escaping @Sendable (Double) async throws -> Void = HTTPClient.defaultSleep) {
        self.transport = transport
        self.retry = retry
        self.sleep = sleep
    }

    /// `Task.sleep` for the given seconds; throws `CancellationError` when the task is cancelled.
    public static let defaultSleep: @Sendable (Double) async throws -> Void = { seconds in
        guard seconds > 0 else { return try Task.checkCancellation() }
        try await Task.sleep(for: .milliseconds(Int64(min(seconds, 1e9) * 1000)))
    }

    /// Sends `request`, retrying per ``retry``.
    /// - Parameters:
    ///   - request: what to send.
    ///   - idempotent: whether sending it twice is harmless; true by default.
    ///     When false, only `.connectionRefused` is retried.
    /// - Returns: the last response, whatever its status (a retryable status is
    ///   returned once the retries are spent).
    /// - Throws: the last ``HTTPClientError`` when every attempt failed in
    ///   transport; ``HTTPClientError/cancelled`` when the task is cancelled,
    ///   also during a backoff wait.
    public func send(_ request: HTTPClientRequest, idempotent: Bool = true) async throws(HTTPClientError) -> HTTPClientResponse {
        var attempt = 0
        while true {
            attempt += 1
            if Task.isCancelled { throw .cancelled }
            let retryAfter: Double?
            do {
                let response = try await transport.send(request)
                guard idempotent, RetryPolicy.isRetryable(status: response.status) else { return response }
                retryAfter = RetryPolicy.retryAfter(response.headers["retry-after"])
                guard let delay = retry.delay(afterAttempt: attempt, retryAfter: retryAfter) else { return response }
                try await wait(delay)
            } catch {
                if error == .cancelled || Task.isCancelled { throw .cancelled }
                guard Self.isRetryable(error, idempotent: idempotent), let delay = retry.delay(afterAttempt: attempt, retryAfter: nil) else { throw error }
                try await wait(delay)
            }
        }
    }

    /// A bounded GET for resources such as images: the body of a 2xx answer.
    ///
    /// The size cap is the transport's: give the client a
    /// `URLSessionTransport(maxResponseBytes:destinationPolicy:)` to bound it
    /// (and to refuse non-public destinations when the URL is someone else's).
    /// Retries follow ``retry``.
    /// - Parameters:
    ///   - url: what to fetch.
    ///   - timeout: idle seconds, 10 by default.
    /// - Returns: the body.
    /// - Throws: any ``HTTPClientError``; a non-2xx answer is `.transport` with reason `HTTP <status>`.
    public func fetch(_ url: URL, timeout: Double = 10) async throws(HTTPClientError) -> [UInt8] {
        let response = try await send(HTTPClientRequest(url: url, timeout: timeout))
        guard (200..<300).contains(response.status) else {
            throw .transport(url: Redaction.url(url), reason: "HTTP \(response.status)")
        }
        return response.body
    }

    /// Whether a failed attempt may be repeated: a refused connection always
    /// (the server never saw it), other transient failures only when idempotent.
    static func isRetryable(_ error: HTTPClientError, idempotent: Bool) -> Bool {
        if case .connectionRefused = error { return true }
        return idempotent && error.isTransient
    }

    /// Sleeps between attempts; any failure of the sleep is cancellation.
    func wait(_ seconds: Double) async throws(HTTPClientError) {
        do { try await sleep(seconds) } catch { throw .cancelled }
        if Task.isCancelled { throw .cancelled }
    }
}
