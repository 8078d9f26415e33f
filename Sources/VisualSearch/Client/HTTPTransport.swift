import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// One HTTP request as the client sends it.
public struct HTTPRequest: Sendable, Hashable {
    public var method: String
    public var url: URL
    /// Header fields in order.
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]?
    /// Seconds without progress before the request fails.
    public var timeout: Double

    public init(method: String, url: URL, headers: [(name: String, value: String)] = [], body: [UInt8]? = nil, timeout: Double = 10) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }

    /// The first value of a header, case-insensitively.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    public static func == (lhs: HTTPRequest, rhs: HTTPRequest) -> Bool {
        lhs.method == rhs.method && lhs.url == rhs.url && lhs.body == rhs.body && lhs.timeout == rhs.timeout
            && lhs.headers.map(\.name) == rhs.headers.map(\.name) && lhs.headers.map(\.value) == rhs.headers.map(\.value)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(method)
        hasher.combine(url)
        hasher.combine(body)
    }
}

/// One HTTP answer.
public struct HTTPResponse: Sendable, Hashable {
    public var status: Int
    /// Header fields, names lower-cased.
    public var headers: [String: String]
    public var body: [UInt8]

    public init(status: Int, headers: [String: String] = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
        self.body = body
    }
}

/// Sends HTTP requests. The client's only I/O, so a test or an app can put
/// its own stack underneath.
public protocol HTTPTransport: Sendable {
    /// Sends one request and returns the answer, whatever its status.
    /// - Throws: ``ClientError/transport(url:reason:)``, ``ClientError/timeout(url:seconds:)``,
    ///   ``ClientError/responseTooLarge(url:limit:)`` or ``ClientError/cancelled``.
    func send(_ request: HTTPRequest) async throws(ClientError) -> HTTPResponse
}

/// ``HTTPTransport`` over the platform's `URLSession` (FoundationNetworking
/// on Linux): connection reuse, streamed bodies with a size cap (an
/// oversized answer is abandoned as it arrives, never buffered whole), and
/// cancellation that stops the request at once.
///
/// ```swift
/// let transport = URLSessionTransport(maxResponseBytes: 8 << 20)
/// let client = ViSearchClient(configuration: configuration, transport: transport)
/// ```
public final class URLSessionTransport: NSObject, HTTPTransport, URLSessionDataDelegate, @unchecked Sendable {
    /// Largest answer accepted: 32 MiB by default.
    public let maxResponseBytes: Int
    private let session: Mutex<URLSession?> = Mutex(nil)
    private let pending = Mutex<[Int: Pending]>([:])

    private final class Pending: @unchecked Sendable {
        // Touched only on the session's serial delegate queue, then handed to the continuation once.
        var response: HTTPURLResponse?
        var body: [UInt8] = []
        var tooLarge = false
        /// When bytes last moved, and whether the watchdog gave up (shared with the watchdog task).
        let progress = Mutex<(last: ContinuousClock.Instant, timedOut: Bool)>((ContinuousClock.now, false))
        let url: URL
        let timeout: Double
        let continuation: CheckedContinuation<Result<HTTPResponse, ClientError>, Never>
        init(url: URL, timeout: Double, continuation: CheckedContinuation<Result<HTTPResponse, ClientError>, Never>) {
            self.url = url
            self.timeout = timeout
            self.continuation = continuation
        }
    }

    /// A transport with its own session.
    public init(maxResponseBytes: Int = 32 << 20) {
        self.maxResponseBytes = maxResponseBytes
        super.init()
    }

    deinit {
        session.withLock { $0?.invalidateAndCancel() }
    }

    private func urlSession() -> URLSession {
        session.withLock { current in
            if let current { return current }
            let configuration = URLSessionConfiguration.ephemeral
            configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
            configuration.httpMaximumConnectionsPerHost = 8
            let queue = OperationQueue()
            queue.maxConcurrentOperationCount = 1
            let created = URLSession(configuration: configuration, delegate: self, delegateQueue: queue)
            current = created
            return created
        }
    }

    public func send(_ request: HTTPRequest) async throws(ClientError) -> HTTPResponse {
        if Task.isCancelled { throw .cancelled }
        var urlRequest = URLRequest(url: request.url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: request.timeout)
        urlRequest.httpMethod = request.method
        for header in request.headers { urlRequest.addValue(header.value, forHTTPHeaderField: header.name) }
        if let body = request.body { urlRequest.httpBody = Data(body) }
        let session = urlSession()
        let task = session.dataTask(with: urlRequest)
        let identifier = task.taskIdentifier
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<HTTPResponse, ClientError>, Never>) in
                let state = Pending(url: request.url, timeout: request.timeout, continuation: continuation)
                pending.withLock { $0[identifier] = state }
                task.resume()
                URLSessionTransport.watch(task, state: state)
            }
        } onCancel: {
            task.cancel()
        }
        switch result {
        case .success(let response): return response
        case .failure(let error): throw Task.isCancelled ? .cancelled : error
        }
    }

    /// Enforces the timeout as "no progress for `timeout` seconds" (URLSession
    /// on Linux applies only the session-wide timeout, not the request's).
    private static func watch(_ task: URLSessionDataTask, state: Pending) {
        let timeout = Duration.milliseconds(Int64(state.timeout * 1000))
        Task.detached {
            while task.state == .running || task.state == .suspended {
                try? await Task.sleep(for: min(timeout / 4, .milliseconds(250)))
                let expired = state.progress.withLock { progress -> Bool in
                    if progress.last.duration(to: .now) > timeout { progress.timedOut = true }
                    return progress.timedOut
                }
                if expired {
                    task.cancel()
                    return
                }
            }
        }
    }

    public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                           completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        guard let state = pending.withLock({ $0[dataTask.taskIdentifier] }) else { return completionHandler(.cancel) }
        let http = response as? HTTPURLResponse
        state.response = http
        state.progress.withLock { $0.last = .now }
        if response.expectedContentLength > Int64(maxResponseBytes) {
            state.tooLarge = true
            return completionHandler(.cancel)
        }
        completionHandler(.allow)
    }

    public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let state = pending.withLock({ $0[dataTask.taskIdentifier] }) else { return }
        if state.body.count + data.count > maxResponseBytes {
            state.tooLarge = true
            dataTask.cancel()
            return
        }
        state.body.append(contentsOf: data)
        state.progress.withLock { $0.last = .now }
    }

    public func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let state = pending.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        let url = state.url.absoluteString
        if state.progress.withLock({ $0.timedOut }) {
            state.continuation.resume(returning: .failure(.timeout(url: url, seconds: state.timeout)))
        } else if state.tooLarge {
            state.continuation.resume(returning: .failure(.responseTooLarge(url: url, limit: maxResponseBytes)))
        } else if let error {
            state.continuation.resume(returning: .failure(URLSessionTransport.classify(error, url: url, timeout: state.timeout)))
        } else if let response = state.response {
            var headers: [String: String] = [:]
            for (key, value) in response.allHeaderFields {
                if let key = key as? String, let value = value as? String { headers[key.lowercased()] = value }
            }
            state.continuation.resume(returning: .success(HTTPResponse(status: response.statusCode, headers: headers, body: state.body)))
        } else {
            state.continuation.resume(returning: .failure(.transport(url: url, reason: "no HTTP response")))
        }
    }

    static func classify(_ error: any Error, url: String, timeout: Double) -> ClientError {
        let nsError = error as NSError
        if nsError.domain == NSURLErrorDomain {
            switch nsError.code {
            case NSURLErrorTimedOut: return .timeout(url: url, seconds: timeout)
            case NSURLErrorCancelled: return .cancelled
            case NSURLErrorCannotConnectToHost: return .transport(url: url, reason: "connection refused")
            case NSURLErrorNetworkConnectionLost: return .transport(url: url, reason: "connection lost before the answer was complete")
            default: break
            }
        }
        return .transport(url: url, reason: nsError.localizedDescription)
    }
}
