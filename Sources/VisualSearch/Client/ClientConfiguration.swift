import Foundation

/// How a client reaches ViSearch (or `vsearch serve`): a plain value, no
/// singleton and no setup call.
///
/// ```swift
/// let hosted = ClientConfiguration(credentials: .accessKey("KEY", secret: "SECRET"))
/// let local = ClientConfiguration(baseURL: URL(string: "http://127.0.0.1:8080")!, credentials: .appKey("dev"))
/// let client = ViSearchClient(configuration: local)
/// ```
public struct ClientConfiguration: Sendable, Hashable {
    /// How requests are authenticated (wire-protocol.md §1.3).
    public enum Credentials: Sendable, Hashable {
        /// An app key, sent as the query parameter `access_key` (the mobile SDKs' mode).
        case appKey(String)
        /// Access key and secret, sent as HTTP Basic authorisation (the server SDKs' mode).
        case accessKey(String, secret: String)
        /// Nothing (a local server with no keys configured).
        case none
    }

    /// `https://visearch.visenze.com`, the hosted ViSearch service.
    public static let viSearchURL = URL(string: "https://visearch.visenze.com")!
    /// `https://visearch.visenze.com.cn`, the hosted service in China.
    public static let viSearchChinaURL = URL(string: "https://visearch.visenze.com.cn")!

    /// Where requests go: ``viSearchURL`` by default.
    public var baseURL: URL
    public var credentials: Credentials
    /// Seconds without progress before a request fails: 10 by default (as the Swift SDK).
    public var timeout: Double
    public var retry: RetryPolicy
    /// Sent as `User-Agent` and, as the SDKs do, `X-Requested-With`.
    public var userAgent: String

    public init(baseURL: URL = ClientConfiguration.viSearchURL, credentials: Credentials, timeout: Double = 10,
                retry: RetryPolicy = .default, userAgent: String = "vsearch-swift/\(ClientConfiguration.version)") {
        self.baseURL = baseURL
        self.credentials = credentials
        self.timeout = timeout
        self.retry = retry
        self.userAgent = userAgent
    }

    /// The library version reported in the user agent.
    public static let version = "0.1.0"
}

/// How a client reaches ProductSearch: `app_key` and `placement_id` travel
/// as parameters on every call (wire-protocol.md §4.2).
///
/// ```swift
/// let client = ProductSearchClient(configuration: ProductSearchConfiguration(appKey: "KEY", placementID: 1))
/// ```
public struct ProductSearchConfiguration: Sendable, Hashable {
    /// `https://multimodal.search.rezolve.com`, the default (legacy `v1/product/…` paths).
    public static let productSearchURL = URL(string: "https://multimodal.search.rezolve.com")!

    public var baseURL: URL
    public var appKey: String
    public var placementID: Int
    public var timeout: Double
    public var retry: RetryPolicy
    public var userAgent: String

    public init(baseURL: URL = ProductSearchConfiguration.productSearchURL, appKey: String, placementID: Int,
                timeout: Double = 10, retry: RetryPolicy = .default,
                userAgent: String = "vsearch-swift/\(ClientConfiguration.version)") {
        self.baseURL = baseURL
        self.appKey = appKey
        self.placementID = placementID
        self.timeout = timeout
        self.retry = retry
        self.userAgent = userAgent
    }

    /// The cloud-specific hosts (`multisearch-aw`/`-az.rezolve.com`) use
    /// `v1/visearch/…` paths; every other host the legacy `v1/product/…`.
    public var pathPrefix: String {
        let host = baseURL.host ?? ""
        return host.hasPrefix("multisearch-aw.") || host.hasPrefix("multisearch-az.") ? "v1/visearch" : "v1/product"
    }
}
