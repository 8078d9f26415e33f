import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ConcurrencyToolkit

extension URLSessionTransport {
    /// One request in flight: what has arrived, the first failure recorded
    /// (which wins over whatever URLSession reports afterwards), the idle
    /// watchdog, and the continuation the caller waits on.
    ///
    /// Delegate callbacks (on the session's serial queue), the watchdog (a
    /// detached task) and the caller's cancellation handler all touch it, so
    /// its state lives behind one mutex.
    final class Exchange: Sendable {
        struct Head: Sendable {
            var status: Int
            var headers: [String: String]
            var url: URL?
        }

        struct State: Sendable {
            var head: Head?
            var body: [UInt8] = []
            var failure: HTTPClientError?
            var redirects = 0
            /// When bytes last moved, on ``clock``.
            var lastProgress: Duration = .zero
            var finished = false
        }

        let shownURL: String
        let method: String
        let timeout: Double
        let maxRedirects: Int
        let state = Locked(State())
        let outcome = Handoff<Result<HTTPClientResponse, HTTPClientError>>()
        let watchdog = Locked<Task<Void, Never>?>(nil)
        /// The clock idle time is measured on.
        let clock: ElapsedClock

        init(_ request: HTTPClientRequest, maxRedirects: Int, clock: ElapsedClock) {
            self.clock = clock
            shownURL = Redaction.url(request.url)
            method = request.method.uppercased()
            timeout = request.timeout
            self.maxRedirects = maxRedirects
            state.withLock { $0.lastProgress = clock.now }
        }

        /// Bytes moved: the idle clock starts again.
        func progressed() {
            let now = clock.now
            state.withLock { $0.lastProgress = now }
        }

        /// Records why the exchange failed, unless an earlier reason is already recorded.
        func fail(_ error: HTTPClientError) {
            state.withLock { state in
                if state.failure == nil { state.failure = error }
            }
        }

        /// Fails the request after ``timeout`` seconds without progress by
        /// cancelling `task`. Sleeps until the idle deadline, not in small polls.
        func startWatchdog(cancelling task: URLSessionTask) {
            let limit = Duration.milliseconds(Int64(max(0.001, timeout) * 1000))
            let handle = Task.detached { [self] in
                while true {
                    let now = clock.now
                    let wait: Duration? = state.withLock { state in
                        guard !state.finished else { return nil }
                        let idle = now - state.lastProgress
                        guard idle < limit else {
                            if state.failure == nil { state.failure = .timeout(url: shownURL, seconds: timeout) }
                            return .zero
                        }
                        return limit - idle
                    }
                    guard let wait else { return }
                    if wait == .zero {
                        task.cancel()
                        return
                    }
                    do { try await clock.sleep(for: wait) } catch { return }
                }
            }
            watchdog.withLock { $0 = handle }
        }

        /// The caller gave up: answer `.cancelled` now, without waiting for URLSession.
        func abandon() {
            state.withLock { $0.finished = true }
            watchdog.withLock { $0?.cancel() }
            outcome.resume(.failure(.cancelled))
        }

        /// URLSession finished the task: answer with the recorded failure, its error, or the response.
        func finish(error: (any Error)?) {
            let result: Result<HTTPClientResponse, HTTPClientError> = state.withLock { state in
                state.finished = true
                if let failure = state.failure { return .failure(failure) }
                if let error { return .failure(Exchange.classify(error, url: shownURL, timeout: timeout, maxRedirects: maxRedirects)) }
                guard let head = state.head else { return .failure(.transport(url: shownURL, reason: "no HTTP response")) }
                let body = state.body
                state.body = []
                return .success(HTTPClientResponse(status: head.status, headers: head.headers, body: body, url: head.url))
            }
            watchdog.withLock { $0?.cancel() }
            outcome.resume(result)
        }

        /// URLSession's errors as ``HTTPClientError``.
        static func classify(_ error: any Error, url: String, timeout: Double, maxRedirects: Int) -> HTTPClientError {
            let nsError = error as NSError
            if nsError.domain == NSURLErrorDomain {
                switch nsError.code {
                case NSURLErrorTimedOut: return .timeout(url: url, seconds: timeout)
                case NSURLErrorCancelled: return .cancelled
                // No connection was made (libcurl's "couldn't connect": refused, unreachable).
                case NSURLErrorCannotConnectToHost: return .connectionRefused(url: url)
                case NSURLErrorCannotFindHost, NSURLErrorDNSLookupFailed: return .transport(url: url, reason: "cannot resolve the host")
                case NSURLErrorNetworkConnectionLost: return .transport(url: url, reason: "connection lost before the answer was complete")
                // URLSession's own limit (20 on Linux); ours normally answers first, in the redirect delegate.
                case NSURLErrorHTTPTooManyRedirects: return .tooManyRedirects(url: url, limit: maxRedirects)
                default: break
                }
            }
            return .transport(url: url, reason: nsError.localizedDescription)
        }
    }
}
