import Foundation
import VisualSearch

/// Everything `vsearch serve` can be told, with its defaults.
///
/// ```swift
/// var configuration = ServerConfiguration(catalogPath: "catalog.sqlite")
/// configuration.port = 0                          // any free port
/// configuration.credentials = try ServerCredentials(lines: "dev\nKEY:SECRET")
/// ```
public struct ServerConfiguration: Sendable {
    /// The catalog file served.
    public var catalogPath: String
    /// The address bound: `127.0.0.1` by default (loopback only). Binding
    /// elsewhere is an explicit choice.
    public var host: String
    /// 8080 by default; 0 picks a free port (reported by ``VisualSearchServer/run(onListening:)``).
    public var port: Int
    /// Who may call; open (no keys) by default.
    public var credentials: ServerCredentials
    /// Largest request body: 16 MiB by default (the hosted service documents 10 MB).
    /// A larger body is refused with 413 as soon as its size is known.
    public var maxBodyBytes: Int
    /// Longest a request may take, reading its body included: 30 s by default (then 503).
    public var requestTimeout: Double
    /// Requests handled at once; more are refused with 503 and `Retry-After: 1`. 64 by default.
    public var maxConcurrentRequests: Int
    /// Seconds an idle keep-alive connection is kept: 60 by default.
    public var idleTimeout: Double
    /// Log lines as JSON objects instead of text.
    public var jsonLogs: Bool
    /// Whether `im_url` may name hosts other than loopback. Off by default:
    /// a server reachable by others must not be made to fetch arbitrary URLs.
    /// Local files are accepted only while the server is bound to loopback.
    public var allowRemoteFetch: Bool

    public init(catalogPath: String, host: String = "127.0.0.1", port: Int = 8080, credentials: ServerCredentials = ServerCredentials(),
                maxBodyBytes: Int = 16 << 20, requestTimeout: Double = 30, maxConcurrentRequests: Int = 64,
                idleTimeout: Double = 60, jsonLogs: Bool = false, allowRemoteFetch: Bool = false) {
        self.catalogPath = catalogPath
        self.host = host
        self.port = port
        self.credentials = credentials
        self.maxBodyBytes = maxBodyBytes
        self.requestTimeout = requestTimeout
        self.maxConcurrentRequests = maxConcurrentRequests
        self.idleTimeout = idleTimeout
        self.jsonLogs = jsonLogs
        self.allowRemoteFetch = allowRemoteFetch
    }
}

extension ServerConfiguration {
    /// Whether ``host`` is a loopback address.
    public var isLoopback: Bool { ["127.0.0.1", "::1", "localhost"].contains(host) || host.hasPrefix("127.") }

    /// Checks an `im_url` against the fetch policy and returns what to load.
    func imageSource(_ text: String, parameter: String) throws(ServerError) -> QueryImage {
        let refuse = { (reason: String) -> ServerError in .engine(.invalidParameter(name: parameter, reason: reason)) }
        if text.hasPrefix("/") || text.lowercased().hasPrefix("file://") {
            guard isLoopback else { throw refuse("local files are read only while the server is bound to loopback") }
            return .file(text.hasPrefix("/") ? text : (URL(string: text)?.path ?? text))
        }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = url.host?.lowercased() else {
            throw refuse("\"\(text)\" is not an http(s) URL, a file:// URL or an absolute path")
        }
        let loopback = host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.")
        guard loopback || allowRemoteFetch else {
            throw refuse("\(host) is not loopback; start the server with --allow-remote-fetch to fetch other hosts")
        }
        return .url(text)
    }
}
