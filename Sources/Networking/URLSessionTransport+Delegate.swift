import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ConcurrencyToolkit

extension URLSessionTransport {
    /// The session's delegate: routes each callback to its ``Exchange``,
    /// enforces the size cap as bytes arrive and vets redirects. A separate
    /// object so that ``URLSessionTransport`` itself is no `NSObject`; it
    /// holds no reference back to the transport (the session retains it).
    final class SessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
        let maxResponseBytes: Int
        let destinationPolicy: DestinationPolicy
        let maxRedirects: Int
        let exchanges = Locked<[Int: Exchange]>([:])

        init(maxResponseBytes: Int, destinationPolicy: DestinationPolicy, maxRedirects: Int) {
            self.maxResponseBytes = maxResponseBytes
            self.destinationPolicy = destinationPolicy
            self.maxRedirects = maxRedirects
        }

        func register(_ exchange: Exchange, for task: URLSessionTask) {
            exchanges.withLock { $0[task.taskIdentifier] = exchange }
        }

        func unregister(_ task: URLSessionTask) {
            exchanges.withLock { _ = $0.removeValue(forKey: task.taskIdentifier) }
        }

        func exchange(for task: URLSessionTask) -> Exchange? {
            exchanges.withLock { $0[task.taskIdentifier] }
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
            guard let exchange = exchange(for: dataTask) else { return completionHandler(.cancel) }
            var headers: [String: String] = [:]
            let http = response as? HTTPURLResponse
            for (key, value) in http?.allHeaderFields ?? [:] {
                if let key = key as? String, let value = value as? String { headers[key.lowercased()] = value }
            }
            exchange.state.withLock { state in
                state.head = Exchange.Head(status: http?.statusCode ?? 0, headers: headers, url: response.url)
                state.body = []
                state.lastProgress = exchange.clock.now
            }
            if exchange.method != "HEAD", response.expectedContentLength > Int64(maxResponseBytes) {
                exchange.fail(.responseTooLarge(url: exchange.shownURL, limit: maxResponseBytes))
                completionHandler(.cancel)
                dataTask.cancel()
                return
            }
            completionHandler(.allow)
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            guard let exchange = exchange(for: dataTask) else { return }
            let tooLarge = exchange.state.withLock { state -> Bool in
                guard state.failure == nil else { return false }
                if state.body.count + data.count > maxResponseBytes {
                    state.failure = .responseTooLarge(url: exchange.shownURL, limit: maxResponseBytes)
                    state.body = []
                    return true
                }
                state.body.append(contentsOf: data)
                state.lastProgress = exchange.clock.now
                return false
            }
            if tooLarge { dataTask.cancel() }
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
                        totalBytesExpectedToSend: Int64) {
            exchange(for: task)?.progressed()
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            guard let exchange = exchanges.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
            exchange.finish(error: error)
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
            // FoundationNetworking traps when this handler is called for a task that was cancelled
            // meanwhile (by the idle watchdog, the caller or invalidation): answer only a task still running.
            let completionHandler: @Sendable (URLRequest?) -> Void = { next in
                if task.state == .running { completionHandler(next) }
            }
            guard let exchange = exchange(for: task) else { return completionHandler(nil) }
            let count = exchange.state.withLock { state -> Int in
                state.redirects += 1
                state.lastProgress = exchange.clock.now
                return state.redirects
            }
            guard count <= maxRedirects else {
                exchange.fail(.tooManyRedirects(url: exchange.shownURL, limit: maxRedirects))
                completionHandler(nil)
                task.cancel()
                return
            }
            guard let target = request.url else {
                exchange.fail(.transport(url: exchange.shownURL, reason: "redirect without a target"))
                completionHandler(nil)
                task.cancel()
                return
            }
            let next = Self.withoutCredentials(request, leaving: response.url ?? task.originalRequest?.url)
            let refuse: @Sendable (HTTPClientError) -> Void = { error in
                exchange.fail(error)
                completionHandler(nil)
                task.cancel()
            }
            guard destinationPolicy.refusesNonPublicAddresses else {
                do throws(HTTPClientError) {
                    _ = try destinationPolicy.checkScheme(target)
                    completionHandler(next)
                } catch { refuse(error) }
                return
            }
            let policy = destinationPolicy
            Task.detached {
                do throws(HTTPClientError) {
                    try await policy.check(target, timeout: exchange.timeout)
                    completionHandler(next)
                } catch { refuse(error) }
            }
        }

        /// The redirect's request, minus credentials when it leaves the origin they were meant for.
        static func withoutCredentials(_ request: URLRequest, leaving origin: URL?) -> URLRequest {
            guard let target = request.url, let origin, Self.origin(of: target) != Self.origin(of: origin) else { return request }
            var request = request
            for name in ["Authorization", "Proxy-Authorization", "Cookie"] { request.setValue(nil, forHTTPHeaderField: name) }
            return request
        }

        static func origin(of url: URL) -> String {
            let scheme = url.scheme?.lowercased() ?? ""
            return "\(scheme)://\(url.host?.lowercased() ?? ""):\(url.port ?? (scheme == "https" ? 443 : 80))"
        }
    }
}
