import ConcurrencyToolkit
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// ``HTTPTransport`` over the platform's `URLSession` (FoundationNetworking
/// on Linux), careful in the ways a server fetching other people's URLs must be.
///
/// - **Async throughout**: delegate callbacks resume a continuation; no thread
///   is ever blocked waiting (host checks resolve on a thread of their own).
/// - **Idle timeout enforced here**: a watchdog task fails the request after
///   ``HTTPClientRequest/timeout`` seconds without progress (connecting,
///   sending, receiving), because FoundationNetworking on Linux ignores a
///   request's own timeout.
/// - **Size cap while streaming**: a `Content-Length` over ``maxResponseBytes``
///   is refused before any body byte is read; otherwise the body is counted
///   as it arrives (chunked or compressed too) and abandoned at the cap, never buffered whole.
/// - **Destinations**: the first URL is checked with ``destinationPolicy``
///   before connecting, and every redirect target before it is followed;
///   redirects beyond ``maxRedirects`` fail. A redirect to another origin
///   drops `Authorization`, `Proxy-Authorization` and `Cookie`. (FoundationNetworking
///   on Linux does ask the delegate before each redirect, on the session's
///   queue, and waits for its answer; left alone it would follow up to 20.)
///   The check resolves names itself and URLSession resolves them again, so
///   DNS rebinding between the two is not prevented: see ``DestinationPolicy``.
/// - **Cancellation**: cancelling the calling task stops the request at once.
///
/// Cookies and caches are off (an ephemeral session that stores nothing).
///
/// ```swift
/// let transport = URLSessionTransport(maxResponseBytes: 8 << 20, destinationPolicy: .publicOnly)
/// let response = try await transport.send(HTTPClientRequest(url: imageURL, timeout: 5))
/// ```
public final class URLSessionTransport: HTTPTransport {
    /// The largest answer accepted, in bytes: 32 MiB by default.
    public let maxResponseBytes: Int
    /// Where requests and redirects may go: ``DestinationPolicy/unrestricted`` by default.
    public let destinationPolicy: DestinationPolicy
    /// Redirects followed per request before ``HTTPClientError/tooManyRedirects(url:limit:)``: 5 by default.
    public let maxRedirects: Int
    /// The clock each request's idle timeout runs on: ``ElapsedClock/continuous`` by default.
    public let idleClock: ElapsedClock
    let delegate: SessionDelegate
    let session: URLSession

    /// A transport with its own session.
    /// - Parameters:
    ///   - maxResponseBytes: the largest answer accepted, 32 MiB by default.
    ///   - destinationPolicy: where requests and redirects may go, unrestricted by default.
    ///   - maxRedirects: redirects followed per request, 5 by default (0 follows none).
    ///   - idleClock: the clock idle timeouts run on, wall time by default (a test gives one it controls).
    public init(maxResponseBytes: Int = 32 << 20, destinationPolicy: DestinationPolicy = .unrestricted, maxRedirects: Int = 5,
                idleClock: ElapsedClock = .continuous) {
        self.idleClock = idleClock
        self.maxResponseBytes = max(0, maxResponseBytes)
        self.destinationPolicy = destinationPolicy
        self.maxRedirects = max(0, maxRedirects)
        delegate = SessionDelegate(maxResponseBytes: self.maxResponseBytes, destinationPolicy: destinationPolicy, maxRedirects: self.maxRedirects)
        let configuration = URLSessionConfiguration.ephemeral
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        configuration.httpMaximumConnectionsPerHost = 8
        // The watchdog enforces each request's idle timeout; the session's own must never fire first.
        configuration.timeoutIntervalForRequest = 24 * 3600
        configuration.timeoutIntervalForResource = 7 * 24 * 3600
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        queue.name = "vsearch.networking.session"
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: queue)
    }

    deinit {
        session.invalidateAndCancel()
    }

    /// Sends `request` once (redirects followed within the limits).
    /// - Returns: the answer, whatever its status, with the URL that finally answered.
    /// - Throws: ``HTTPClientError``: `.destinationRefused` before anything is
    ///   sent, `.connectionRefused`, `.transport`, `.timeout`, `.responseTooLarge`,
    ///   `.tooManyRedirects`, or `.cancelled` when the calling task is cancelled.
    public func send(_ request: HTTPClientRequest) async throws(HTTPClientError) -> HTTPClientResponse {
        if Task.isCancelled { throw .cancelled }
        try await destinationPolicy.check(request.url, timeout: request.timeout)
        if Task.isCancelled { throw .cancelled }
        let task = session.dataTask(with: Self.urlRequest(for: request))
        let exchange = Exchange(request, maxRedirects: maxRedirects, clock: idleClock)
        delegate.register(exchange, for: task)
        let result = await withTaskCancellationHandler {
            await exchange.outcome.value {
                if Task.isCancelled {
                    delegate.unregister(task)
                    exchange.abandon()
                    task.cancel()
                    return
                }
                task.resume()
                exchange.startWatchdog(cancelling: task)
            }
        } onCancel: {
            exchange.abandon()
            task.cancel()
        }
        switch result {
        case .success(let response): return response
        case .failure(let error): throw Task.isCancelled ? .cancelled : error
        }
    }

    static func urlRequest(for request: HTTPClientRequest) -> URLRequest {
        var urlRequest = URLRequest(url: request.url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: max(1, request.timeout))
        urlRequest.httpMethod = request.method
        urlRequest.httpShouldHandleCookies = false
        for header in request.headers { urlRequest.addValue(header.value, forHTTPHeaderField: header.name) }
        if let body = request.body { urlRequest.httpBody = Data(body) }
        return urlRequest
    }
}
