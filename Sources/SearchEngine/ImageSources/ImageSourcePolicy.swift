import Foundation
import ImageOps
import Networking
import VisualSearch

/// What an engine may read when a request names an image by location
/// (`im_url` of an upload search, the data API's insert):
///
/// - **local files** (`file://` URLs and absolute paths) only inside the
///   configured image roots, after `..` and symbolic links are resolved — or
///   any file, for the command line, where the user names their own files;
/// - **remote images** (`http(s)://`) only when remote fetching is on, and
///   then only destinations the ``DestinationPolicy`` permits (by default no
///   loopback, link-local, private or multicast address, whether named
///   directly, through DNS or through a redirect), at most
///   ``maxDownloadBytes`` and ``fetchTimeout`` seconds without progress.
///
/// ```swift
/// let server = ImageSourcePolicy(imageRoots: ["/srv/shop/images"], remoteFetch: .publicOnly)
/// ```
public struct ImageSourcePolicy: Sendable, Hashable {
    /// Folders local images may be read from. Empty: no local file may be read
    /// (unless ``readsAnyLocalFile``).
    public var imageRoots: [String]
    /// Whether any local file may be read: the command line's policy.
    public var readsAnyLocalFile: Bool
    /// Where remote images may be fetched from; `nil` refuses every remote fetch.
    public var remoteFetch: DestinationPolicy?
    /// Largest remote image: 16 MiB by default.
    public var maxDownloadBytes: Int
    /// Seconds without progress before a fetch fails: 10 by default.
    public var fetchTimeout: Double

    public init(imageRoots: [String] = [], readsAnyLocalFile: Bool = false, remoteFetch: DestinationPolicy? = nil,
                maxDownloadBytes: Int = 16 << 20, fetchTimeout: Double = 10) {
        self.imageRoots = imageRoots
        self.readsAnyLocalFile = readsAnyLocalFile
        self.remoteFetch = remoteFetch
        self.maxDownloadBytes = maxDownloadBytes
        self.fetchTimeout = fetchTimeout
    }

    /// The command line: the user's own files and any URL they name.
    public static let commandLine = ImageSourcePolicy(readsAnyLocalFile: true, remoteFetch: .unrestricted)

    /// Nothing by location: only uploaded bytes and cached `im_id`s.
    public static let uploadsOnly = ImageSourcePolicy()

    /// The file a local location names, if the policy lets it be read.
    /// - Throws: ``VisualSearchError/fetch(url:reason:)`` saying why not, naming the location only.
    public func permittedFile(_ location: String) throws(VisualSearchError) -> String {
        let path: String
        if location.lowercased().hasPrefix("file://") {
            guard let url = URL(string: location), url.host == nil || url.host == "" || url.host == "localhost" else {
                throw .fetch(url: Redaction.url(location), reason: "not a local file:// URL")
            }
            path = url.path
        } else {
            path = location
        }
        guard path.hasPrefix("/") else {
            throw .fetch(url: Redaction.url(location), reason: "a local image must be an absolute path or a file:// URL")
        }
        if readsAnyLocalFile { return path }
        let refusal = VisualSearchError.fetch(
            url: Redaction.url(location),
            reason: imageRoots.isEmpty
                ? "this server reads no local files (add a folder to \(SettingName.imageRoots) to allow it)"
                : "not inside an image root of this server")
        let lexical = (path as NSString).standardizingPath
        let roots = imageRoots.map { ($0 as NSString).standardizingPath }
        guard roots.contains(where: { ImageSourcePolicy.isInside(lexical, root: $0) }) else { throw refusal }
        // Symbolic links must not lead out of the roots either.
        guard let resolved = ImageSourcePolicy.realPath(lexical) else {
            throw .fetch(url: Redaction.url(location), reason: "no readable file there")
        }
        guard roots.compactMap(ImageSourcePolicy.realPath).contains(where: { ImageSourcePolicy.isInside(resolved, root: $0) }) else {
            throw refusal
        }
        return resolved
    }

    static func isInside(_ path: String, root: String) -> Bool {
        let prefix = root.hasSuffix("/") ? root : root + "/"
        return path.hasPrefix(prefix)
    }

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
