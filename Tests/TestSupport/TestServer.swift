import Foundation
import Networking
import SearchEngine
import VisualSearch
import VisualSearchServer

/// Real `vsearch serve` servers on loopback, on random ports, over catalogs
/// of the corpus — for the tests where the socket is the point. Each test
/// that starts one stops it (``Running/stop()``).
public enum TestServer {
    /// A running server.
    public struct Running: Sendable {
        public let url: URL
        public let server: VisualSearchServer<VisualSearchEngine>
        let task: Task<Void, Never>

        /// Stops the server (cancels its service, which shuts it down gracefully).
        public func stop() async {
            task.cancel()
            _ = await task.value
        }
    }

    /// Starts a server over a fresh catalog of the corpus and returns once it listens.
    public static func start(_ configure: (inout ServerConfiguration) -> Void = { _ in }) async -> Running {
        var configuration = ServerConfiguration(catalog: .sqlite(path: await Corpus.makeCatalog()), port: 0)
        configure(&configuration)
        let server = try! await VisualSearchServer(configuration: configuration)  // test setup
        let (stream, continuation) = AsyncStream<Int>.makeStream()
        let task = Task {
            try? await server.run { bound in continuation.yield(bound) }
            continuation.finish()
        }
        var iterator = stream.makeAsyncIterator()
        let bound = await iterator.next() ?? 0
        return Running(url: URL(string: "http://127.0.0.1:\(bound)")!, server: server, task: task)
    }

    /// Sends a raw request and returns status, headers and parsed JSON.
    public static func raw(_ url: URL, method: String = "GET", headers: [(String, String)] = [], body: [UInt8]? = nil) async throws
        -> (status: Int, headers: [String: String], json: [String: Any]) {
        let response = try await URLSessionTransport().send(HTTPClientRequest(method: method, url: url,
                                                                              headers: headers.map { (name: $0.0, value: $0.1) },
                                                                              body: body, timeout: 30))
        let json = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
        return (response.status, response.headers, json)
    }

    /// A client of a server, without retries.
    public static func client(_ url: URL, credentials: ClientConfiguration.Credentials = .none) -> ViSearchClient {
        ViSearchClient(configuration: ClientConfiguration(baseURL: url, credentials: credentials, retry: .none))
    }
}
