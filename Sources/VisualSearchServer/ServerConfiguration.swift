import CatalogStores
import Foundation
import ImageOps
import Networking
import SearchEngine
import VisualSearch

/// Everything `vsearch serve` can be told, with its defaults.
///
/// ```swift
/// var configuration = ServerConfiguration(catalog: .sqlite(path: "catalog.sqlite"))
/// configuration.port = 0                          // any free port
/// configuration.credentials = try ServerCredentials(lines: "dev\nKEY:SECRET")
/// ```
public struct ServerConfiguration: Sendable {
    /// The catalog served.
    public var catalog: CatalogLocation
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
    /// Light requests (``RequestLane/light``: searches by `im_name`,
    /// recommendations, the collector, the page…) handled at once: 64 by
    /// default. More wait in a bounded queue (``ServerLimits/maxQueuedRequests``,
    /// ``ServerLimits/maxQueueWait``) and are then shed with 503 and `Retry-After`.
    /// Image requests have ``ServerLimits/maxConcurrentImageRequests`` of their own.
    public var maxConcurrentRequests: Int
    /// What error messages call a library setting (``SettingName``, e.g.
    /// `` `ImageSourcePolicy.imageRoots` ``): by its Swift name by default;
    /// `vsearch serve` gives its own flags (`--image-root`), so a client is told
    /// what the server's operator would change.
    public var settingNames: [SettingName: String] = [:]
    /// Seconds an idle keep-alive connection is kept: 60 by default.
    public var idleTimeout: Double
    /// Folders `im_url` (uploads and inserts) may name local files in
    /// (`file://` or absolute paths), after `..` and symbolic links are
    /// resolved. None by default: the server reads no local file it was not given.
    public var imageRoots: [String]
    /// Whether `im_url` may fetch `http(s)://` images. Off by default; when on,
    /// only public addresses are fetched — never loopback, link-local (cloud
    /// metadata), private or multicast ones, whether named directly, through
    /// DNS or through a redirect — unless listed in ``allowedFetchHosts``.
    public var allowRemoteFetch: Bool
    /// `host` or `host:port` exceptions to the public-address rule.
    public var allowedFetchHosts: Set<String>
    /// Whether the web page (`/`, `/analytics`, `/ui/…`) is served. On by default.
    public var servesWebPage: Bool
    /// Serve the page's files from this folder, read on every request,
    /// instead of the ones built in (for developing the page). None by default.
    public var webRoot: String?
    /// Where `/images/{im_name}?size=N` keeps the thumbnails it makes:
    /// ``ThumbnailCache/defaultDirectory`` by default.
    public var thumbnailCache: String
    /// The limits that keep the server answering under load: image size and
    /// decoding budget, per-client rate and concurrency, queues, slow clients
    /// and connections. ``ServerLimits``' defaults unless set.
    public var limits = ServerLimits()
    /// Whether `GET /metrics` answers (Prometheus text format; behind the keys when there are keys). On by default.
    public var servesMetrics = true
    /// The clock admission's rules keep time by: the client rate's token
    /// buckets (``ClientLimits/requestsPerSecond``), the wait in a lane's
    /// queue (``ServerLimits/maxQueueWait``) and an image's wait in the image
    /// work pool's queue (``ImageWorkPool/Limits/maxWait``). `ContinuousClock()` by default;
    /// a test passes a clock it advances itself (a manual or test clock), so
    /// those rules hold however fast the machine runs. The refusal delay, the
    /// request timeout and the connection timeouts keep the wall clock.
    public var admissionClock: any Clock<Duration> = ContinuousClock()
    /// The engine's own settings — the learned embedder and the detector, the
    /// default similarity, k-NN, recommendation blending, graph and index
    /// reports (``VisualSearchEngine/Configuration``); the defaults by default.
    /// The server sets the rest from its own settings
    /// (``VisualSearchServer/engineConfiguration(for:)``): where `im_url` may
    /// read, the image limits, inserts' limits and the image work pool.
    public var engine = VisualSearchEngine.Configuration()
    /// How often the server looks for HNSW graphs holding more removed rows
    /// than the engine's policy allows and rebuilds them in the background
    /// (``EngineUpkeep``); nil: never (`vsearch catalog hnsw --rebuild` still does).
    public var graphCompactionInterval: Duration? = .seconds(60)

    public init(catalog: CatalogLocation = .fromEnvironment(), host: String = "127.0.0.1", port: Int = 8080,
                credentials: ServerCredentials = ServerCredentials(), maxBodyBytes: Int = 16 << 20, requestTimeout: Double = 30,
                maxConcurrentRequests: Int = 64, idleTimeout: Double = 60, imageRoots: [String] = [],
                allowRemoteFetch: Bool = false, allowedFetchHosts: Set<String> = [], servesWebPage: Bool = true,
                webRoot: String? = nil, thumbnailCache: String = ThumbnailCache.defaultDirectory) {
        self.catalog = catalog
        self.host = host
        self.port = port
        self.credentials = credentials
        self.maxBodyBytes = maxBodyBytes
        self.requestTimeout = requestTimeout
        self.maxConcurrentRequests = maxConcurrentRequests
        self.idleTimeout = idleTimeout
        self.imageRoots = imageRoots
        self.allowRemoteFetch = allowRemoteFetch
        self.allowedFetchHosts = allowedFetchHosts
        self.servesWebPage = servesWebPage
        self.webRoot = webRoot
        self.thumbnailCache = thumbnailCache
    }
}

extension ServerConfiguration {
    /// Whether ``host`` is a loopback address.
    public var isLoopback: Bool { ["127.0.0.1", "::1", "localhost"].contains(host) || host.hasPrefix("127.") }

    /// What `im_url` may read and fetch: local files only under
    /// ``imageRoots``; remote hosts only with ``allowRemoteFetch``, and then
    /// only public addresses (plus ``allowedFetchHosts``).
    public var imageSourcePolicy: ImageSourcePolicy {
        ImageSourcePolicy(imageRoots: imageRoots,
                          remoteFetch: allowRemoteFetch ? DestinationPolicy(refusesNonPublicAddresses: true, allowedHosts: allowedFetchHosts) : nil)
    }
}
