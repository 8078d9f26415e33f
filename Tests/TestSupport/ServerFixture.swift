import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Networking
import NIOCore
import SearchEngine
import SQLiteCatalog
import CatalogStores
import VisualSearch
import VisualSearchServer

/// The one server fixture of the test suites, in the three ways a server runs:
///
/// - **router** (``router(_:_:)``): the server's router in a Hummingbird
///   application driven by HummingbirdTesting's `.router` framework — no
///   socket, no port, the same middleware and routes as `vsearch serve`;
/// - **live** (``live(_:)``, ``with(_:_:)``): the whole server,
///   `VisualSearchServer.run`, on a loopback port in this process: the
///   connection guard, keep-alive and the socket are real;
/// - **process**: `vsearch serve` as a child process, started with
///   ``ChildProcess/withRunning(_:_:environment:directory:_:)``
///   (vsearchTests' `ServeCLITests.serving`).
///
/// ```swift
/// let server = try await ServerFixture.server()
/// let reply = try await ServerFixture.router(server) { client in try await client.send("/search?im_name=chelsea_cat") }
/// #expect(reply.status == 200)
/// ```
public enum ServerFixture {
    /// A quiet logger: the request log would print a line per request of every table test.
    public static let logger: Logger = {
        var logger = Logger(label: "vsearch.serve.test")
        logger.logLevel = .error
        return logger
    }()

    /// A server over `catalog` (default: the corpus catalog this test process shares; only for tests that do not change it).
    public static func server(catalog: String? = nil, _ configure: (inout ServerConfiguration) -> Void = { _ in })
        async throws -> VisualSearchServer<VisualSearchEngine> {
        let path: String
        if let catalog { path = catalog } else { path = await Corpus.sharedCatalog() }
        var configuration = ServerConfiguration(catalog: .sqlite(path: path), port: 0)
        configure(&configuration)
        // A SQLite catalog has no pool to scope: the store lives as long as the server holds it.
        return try await VisualSearchServer(configuration: configuration, catalog: OpenedCatalog(sqlite: try await SQLiteCatalogStore(path: path)),
                                            logger: logger)
    }

    // MARK: - Router

    /// Runs `body` with a client of `server`'s router (HummingbirdTesting `.router`); the engine's insert
    /// transactions run meanwhile, in this scope (a live server's run in its `EngineUpkeep`).
    public static func router<Value: Sendable>(_ server: VisualSearchServer<VisualSearchEngine>,
                                               _ body: @Sendable (any TestClientProtocol) async throws -> Value) async throws -> Value {
        try await server.service.withInserts { () async throws in
            try await Application(router: server.router(), logger: logger).test(.router, body)
        }
    }

    // MARK: - Live

    /// A server running on loopback.
    public struct Live: Sendable {
        public let url: URL
        public let server: VisualSearchServer<VisualSearchEngine>
        let task: Task<Void, any Error>

        /// Stops the server (cancels its service group, which shuts it down gracefully) and waits until it has.
        public func stop() async {
            task.cancel()
            _ = try? await task.value
        }
    }

    /// Why a live server did not start.
    public struct StartFailed: Error, CustomStringConvertible {
        public let reason: String
        public var description: String { "the test server did not start: \(reason)" }
    }

    /// Starts a server over a fresh catalog of the corpus (`configure` adjusts it, a PostgreSQL URL included) and
    /// returns once it listens. Its idle and body timeouts are 600 s (real time; a test of them sets its own). The server's task opens the catalog and serves inside that scope, as `vsearch serve` does.
    /// - Throws: ``StartFailed`` with the server's own error when it cannot open its catalog or bind its port.
    public static func live(_ configure: (inout ServerConfiguration) -> Void = { _ in }) async throws -> Live {
        var configuration = ServerConfiguration(catalog: .sqlite(path: await Corpus.makeCatalog()), port: 0)
        // The real-time timeouts out of reach, unless a test sets its own: the tests hold bodies and idle connections on
        // purpose and step their deadlines on a stepped clock, and in the whole suite on two busy cores a test has
        // taken over 20 s between two of its steps — then the connections' body timeout (20 s) cut the held bodies (400)
        // and the idle timeout (60 s) closed the held connections, and a test waiting for them waited for good.
        configuration.idleTimeout = 600
        configuration.limits.connections.bodyTimeout = 600
        configure(&configuration)
        let configured = configuration
        return try await start { listening in
            try await configured.catalog.withCatalog { opened async throws in
                let server = try await VisualSearchServer(configuration: configured, catalog: opened)
                try await server.run { bound in listening(server, bound) }
            }
        }
    }

    /// Runs `server` on its configured host and port and returns once it listens.
    /// - Throws: ``StartFailed`` with the server's error when it stops before listening.
    public static func live(_ server: VisualSearchServer<VisualSearchEngine>) async throws -> Live {
        try await start { listening in try await server.run { bound in listening(server, bound) } }
    }

    /// Runs `serve` in a task and returns once it says where it listens.
    static func start(_ serve: @escaping @Sendable (_ listening: @escaping @Sendable (VisualSearchServer<VisualSearchEngine>, Int) -> Void) async throws -> Void)
        async throws -> Live {
        let (stream, continuation) = AsyncStream<(VisualSearchServer<VisualSearchEngine>, Int)>.makeStream()
        let task = Task {
            defer { continuation.finish() }
            try await serve { server, bound in continuation.yield((server, bound)) }
        }
        var iterator = stream.makeAsyncIterator()
        guard let (server, bound) = await iterator.next() else {
            let reason: String
            do { try await task.value; reason = "it stopped before listening" } catch { reason = "\(error)" }
            throw StartFailed(reason: reason)
        }
        return Live(url: URL(string: "http://127.0.0.1:\(bound)")!, server: server, task: task)
    }

    /// Runs `body` against a fresh live server and stops the server afterwards, whether `body` returns or throws.
    public static func with<Value>(_ configure: (inout ServerConfiguration) -> Void = { _ in },
                                   _ body: (Live) async throws -> Value) async throws -> Value {
        let running = try await live(configure)
        do {
            let value = try await body(running)
            await running.stop()
            return value
        } catch {
            await running.stop()
            throw error
        }
    }

    /// Sends a raw request to a running server and returns status, headers and parsed JSON.
    public static func raw(_ url: URL, method: String = "GET", headers: [(String, String)] = [], body: [UInt8]? = nil) async throws
        -> (status: Int, headers: [String: String], json: [String: Any]) {
        let reply = try await reply(url, method: method, headers: headers, body: body)
        return (reply.status, reply.headers, reply.json)
    }

    /// Sends a raw request to a running server and wraps the answer as a ``Reply``.
    public static func reply(_ url: URL, method: String = "GET", headers: [(String, String)] = [], body: [UInt8]? = nil) async throws -> Reply {
        let response = try await URLSessionTransport().send(HTTPClientRequest(method: method, url: url,
                                                                              headers: headers.map { (name: $0.0, value: $0.1) },
                                                                              body: body, timeout: 30))
        var names: [String: String] = [:]
        for (name, value) in response.headers { names[name.lowercased()] = value }
        return Reply(status: response.status, headers: names, body: response.body)
    }

    // MARK: - Process

    /// Runs `vsearch serve --port 0` (the `binary`) on `catalog`: `body` gets
    /// the server's URL and the running child once its start-up line is
    /// printed (awaited, not polled). Unless `body` sent it a signal, the
    /// server gets SIGTERM when `body` returns; then its outcome (exit status,
    /// the whole log on stderr) is returned with `body`'s value.
    public static func process<Value: Sendable>(binary: String, catalog: String, _ extra: [String] = [], environment: [String: String] = [:],
                                                _ body: (_ url: String, _ server: ChildProcess.Running) async throws -> Value)
        async throws -> (Value, ChildProcess.Outcome) {
        try await ChildProcess.withRunning(binary, ["serve", "--catalog", catalog, "--port", "0"] + extra, environment: environment) { server async throws in
            let line = try await server.line { $0.contains("listening on http://") }
            guard let range = line.range(of: #"http://127\.0\.0\.1:[0-9]+"#, options: .regularExpression) else {
                throw StartFailed(reason: "no address in its start-up line: \(line)")
            }
            let value = try await body(String(line[range]), server)
            if !server.wasSignalled { server.signal(SIGTERM) }
            return value
        }
    }

    /// A client of a server, without retries.
    /// Its timeout is 60 s, not the client's 10 s: the suite asserts what a server answers, not how fast, and in the
    /// whole suite on two busy cores an answer has come after 10 s (the process starved, not the server slow).
    public static func client(_ url: URL, credentials: ClientConfiguration.Credentials = .none) -> ViSearchClient {
        ViSearchClient(configuration: ClientConfiguration(baseURL: url, credentials: credentials, timeout: 60, retry: .none))
    }
}

/// An answer of the server, however it was reached (router or socket).
public struct Reply: Sendable {
    public var status: Int
    /// Header fields, names lower-cased.
    public var headers: [String: String]
    public var body: [UInt8]

    public init(status: Int, headers: [String: String], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public var text: String { String(decoding: body, as: UTF8.self) }
    /// The body as a JSON object (empty when it is not one).
    public var json: [String: Any] { ((try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]) ?? [:] }
    /// ViSearch's `error` list.
    public var errors: [String] { json["error"] as? [String] ?? [] }
    /// ViSearch's `result` list.
    public var results: [[String: Any]] { json["result"] as? [[String: Any]] ?? [] }
    /// `im_name` of each result.
    public var names: [String] { results.compactMap { $0["im_name"] as? String } }
}

extension TestClientProtocol {
    /// Sends a request to the router and collects the answer.
    public func send(_ uri: String, method: HTTPRequest.Method = .get, headers: [(String, String)] = [], body: [UInt8]? = nil) async throws -> Reply {
        var fields = HTTPFields()
        for (name, value) in headers {
            guard let name = HTTPField.Name(name) else { continue }
            fields.append(HTTPField(name: name, value: value))
        }
        let response = try await executeRequest(uri: uri, method: method, headers: fields, body: body.map { ByteBuffer(bytes: $0) })
        var names: [String: String] = [:]
        for field in response.headers { names[field.name.canonicalName.lowercased()] = field.value }
        return Reply(status: Int(response.status.code), headers: names, body: Array(response.body.readableBytesView))
    }

    /// Posts a multipart form.
    public func post(_ uri: String, form: MultipartForm, headers: [(String, String)] = []) async throws -> Reply {
        try await send(uri, method: .post, headers: [("Content-Type", form.contentType)] + headers, body: form.encoded)
    }
}
