import Foundation
import ImageOps
import Synchronization
@testable import VisualSearch
@testable import VisualSearchServer

/// Real servers on loopback, on random ports, over a catalog of the corpus
/// indexed once per test process.
enum TestServer {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path
    static let images = repository + "/corpus/images"
    static let badInput = repository + "/Tests/Fixtures/badinput"

    static func temporaryDirectory() -> String {
        let path = NSTemporaryDirectory() + "vsearch-server-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// A fresh catalog with the corpus and its metadata.
    static func makeCatalog() -> String {
        let path = temporaryDirectory() + "/catalog.sqlite"
        let catalog = try! Catalog(path: path)  // test setup: a failure here fails every test loudly
        _ = try! Indexer(catalog: catalog).run(directory: images, metadata: try! MetadataTable(contentsOf: repository + "/corpus/catalog.csv"))
        return path
    }

    /// Starts a server and returns its base URL once it listens.
    static func start(_ configure: (inout ServerConfiguration) -> Void = { _ in }) async -> (url: URL, server: VisualSearchServer) {
        var configuration = ServerConfiguration(catalogPath: makeCatalog(), port: 0)
        configure(&configuration)
        let server = try! VisualSearchServer(configuration: configuration)
        let port = await withCheckedContinuation { (continuation: CheckedContinuation<Int, Never>) in
            let once = Mutex(false)
            Task.detached {
                try? await server.run { port in
                    if once.withLock({ let first = !$0; $0 = true; return first }) { continuation.resume(returning: port) }
                }
            }
        }
        return (URL(string: "http://127.0.0.1:\(port)")!, server)
    }

    /// The shared open server.
    static let shared = Shared()

    actor Shared {
        var started: (url: URL, server: VisualSearchServer)?
        func get() async -> (url: URL, server: VisualSearchServer) {
            if let started { return started }
            let fresh = await TestServer.start()
            started = fresh
            return fresh
        }
    }

    /// Sends a raw request and returns status, headers and parsed JSON.
    static func raw(_ url: URL, method: String = "GET", headers: [(String, String)] = [], body: [UInt8]? = nil) async throws
        -> (status: Int, headers: [String: String], json: [String: Any]) {
        let response = try await URLSessionTransport().send(HTTPRequest(method: method, url: url, headers: headers.map { (name: $0.0, value: $0.1) },
                                                                        body: body, timeout: 30))
        let json = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
        return (response.status, response.headers, json)
    }

    static func client(_ url: URL, credentials: ClientConfiguration.Credentials = .none) -> ViSearchClient {
        ViSearchClient(configuration: ClientConfiguration(baseURL: url, credentials: credentials, retry: .none))
    }

    static func bytes(_ name: String) -> [UInt8] { (try? FileIO.read(images + "/" + name)) ?? [] }
}
