import Foundation
import ImageOps
import Networking
import VisualSearch

/// Turns a ``QueryImage`` into encoded bytes under an ``ImageSourcePolicy``:
/// uploaded bytes as they are, cached `im_id`s from the ``QueryImageCache``,
/// local files and remote URLs only as the policy allows. Fetching is async
/// through the one HTTP layer: no thread waits, the size cap holds while
/// the body streams in, and every redirect is checked.
public struct QueryImageLoader: Sendable {
    public let policy: ImageSourcePolicy
    public let cache: QueryImageCache
    public let limits: ImageLimits
    let client: HTTPClient

    public init(policy: ImageSourcePolicy, cache: QueryImageCache, limits: ImageLimits = .default,
                transport: (any HTTPTransport)? = nil) {
        self.policy = policy
        self.cache = cache
        self.limits = limits
        client = HTTPClient(transport: transport ?? URLSessionTransport(maxResponseBytes: policy.maxDownloadBytes,
                                                                        destinationPolicy: policy.remoteFetch ?? .publicOnly),
                            retry: .none)
    }

    /// The encoded bytes of a query image.
    /// - Throws: ``VisualSearchError`` naming the location, never echoing what it read.
    public func load(_ image: QueryImage) async throws(VisualSearchError) -> [UInt8] {
        switch image {
        case .bytes(let bytes): return bytes
        case .imageID(let id): return try cache.load(id)
        case .file(let path): return try readFile(path)
        case .url(let text): return try await load(location: text)
        }
    }

    /// Loads `im_url`: `http(s)://`, `file://` or an absolute path (the data API's local form).
    public func load(location text: String) async throws(VisualSearchError) -> [UInt8] {
        let lower = text.lowercased()
        if lower.hasPrefix("file://") || text.hasPrefix("/") { return try readFile(text) }
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://"), let url = URL(string: text), url.host != nil else {
            throw .fetch(url: Redaction.url(text), reason: "not an http(s) URL, a file:// URL or an absolute path")
        }
        guard policy.remoteFetch != nil else {
            throw .fetch(url: Redaction.url(url), reason: "this server does not fetch remote images (\(SettingName.remoteFetch) allows it)")
        }
        do {
            return try await client.fetch(url, timeout: policy.fetchTimeout)
        } catch {
            throw .fetch(url: Redaction.url(url), reason: Self.reason(error))
        }
    }

    /// The bytes ``load(location:)`` will hold for `text`, known before it
    /// loads — what an insert reserves in the image budget before it fetches:
    /// a remote image's most (``ImageSourcePolicy/maxDownloadBytes``), a local
    /// file's size (at most ``ImageLimits/maxInputBytes``), 0 for what will
    /// not load (a file that is missing or not permitted).
    public func expectedBytes(location text: String) -> Int {
        let lower = text.lowercased()
        if lower.hasPrefix("http://") || lower.hasPrefix("https://") { return policy.maxDownloadBytes }
        guard lower.hasPrefix("file://") || text.hasPrefix("/"), let path = try? policy.permittedFile(text),
              let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int else { return 0 }
        return min(size, limits.maxInputBytes)
    }

    func readFile(_ location: String) throws(VisualSearchError) -> [UInt8] {
        let path = try policy.permittedFile(location)
        do throws(ImageOpsError) { return try FileIO.read(path, maxBytes: limits.maxInputBytes) } catch { throw .image(error) }
    }

    /// What went wrong, without the URL (the caller names it, redacted).
    static func reason(_ error: HTTPClientError) -> String {
        switch error {
        case .transport(_, let reason): reason
        case .connectionRefused: "connection refused"
        case .timeout(_, let seconds): "no answer within \(seconds) s"
        case .responseTooLarge(_, let limit): "larger than \(limit) bytes"
        case .destinationRefused(_, let reason): reason
        case .tooManyRedirects(_, let limit): "more than \(limit) redirects"
        case .cancelled: "cancelled"
        }
    }
}
