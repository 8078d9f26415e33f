import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Networking
import NIOCore
import SearchEngine
import TestSupport
import VisualSearch
import VisualSearchServer

/// vsearch's router in a Hummingbird `Application`, driven in process by
/// HummingbirdTesting's `.router` framework: no socket, no port, the same
/// middleware and routes as `vsearch serve`.
///
/// ```swift
/// let server = try await InProcess.server()
/// let reply = try await InProcess.test(server) { client in try await client.send("/search?im_name=chelsea_cat") }
/// #expect(reply.status == 200)
/// ```
enum InProcess {
    /// A quiet logger: the request log would print a line per request of every table test.
    static let logger: Logger = {
        var logger = Logger(label: "vsearch.serve.test")
        logger.logLevel = .error
        return logger
    }()

    /// A server over `catalog` (default: the corpus catalog this test process shares; only for tests that do not change it).
    static func server(catalog: String? = nil, _ configure: (inout ServerConfiguration) -> Void = { _ in }) async throws -> VisualSearchServer<VisualSearchEngine> {
        let path: String
        if let catalog { path = catalog } else { path = await Corpus.sharedCatalog() }
        var configuration = ServerConfiguration(catalog: .sqlite(path: path), port: 0)
        configure(&configuration)
        return try await VisualSearchServer(configuration: configuration, logger: logger)
    }

    /// Runs `body` with a client of `server`'s router (HummingbirdTesting `.router`).
    static func test<Value: Sendable>(_ server: VisualSearchServer<VisualSearchEngine>,
                                      _ body: @Sendable (any TestClientProtocol) async throws -> Value) async throws -> Value {
        try await Application(router: server.router(), logger: logger).test(.router, body)
    }
}

/// An answer of the server, however it was reached (router or socket).
struct Reply: Sendable {
    var status: Int
    /// Header fields, names lower-cased.
    var headers: [String: String]
    var body: [UInt8]

    var text: String { String(decoding: body, as: UTF8.self) }
    /// The body as a JSON object (empty when it is not one).
    var json: [String: Any] { ((try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]) ?? [:] }
    /// ViSearch's `error` list.
    var errors: [String] { json["error"] as? [String] ?? [] }
    /// ViSearch's `result` list.
    var results: [[String: Any]] { json["result"] as? [[String: Any]] ?? [] }
    /// `im_name` of each result.
    var names: [String] { results.compactMap { $0["im_name"] as? String } }
}

extension TestClientProtocol {
    /// Sends a request to the router and collects the answer.
    func send(_ uri: String, method: HTTPRequest.Method = .get, headers: [(String, String)] = [], body: [UInt8]? = nil) async throws -> Reply {
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
    func post(_ uri: String, form: MultipartForm, headers: [(String, String)] = []) async throws -> Reply {
        try await send(uri, method: .post, headers: [("Content-Type", form.contentType)] + headers, body: form.encoded)
    }
}

extension TestServer {
    /// Sends a raw request to a running server and wraps the answer as a ``Reply``.
    static func reply(_ url: URL, method: String = "GET", headers: [(String, String)] = [], body: [UInt8]? = nil) async throws -> Reply {
        let response = try await URLSessionTransport().send(HTTPClientRequest(method: method, url: url,
                                                                              headers: headers.map { (name: $0.0, value: $0.1) },
                                                                              body: body, timeout: 30))
        var names: [String: String] = [:]
        for (name, value) in response.headers { names[name.lowercased()] = value }
        return Reply(status: response.status, headers: names, body: response.body)
    }

    /// Runs `body` against a fresh server and stops the server afterwards, whether `body` returns or throws.
    static func with<Value>(_ configure: (inout ServerConfiguration) -> Void = { _ in },
                            _ body: (Running) async throws -> Value) async throws -> Value {
        let running = await start(configure)
        do {
            let value = try await body(running)
            await running.stop()
            return value
        } catch {
            await running.stop()
            throw error
        }
    }
}
