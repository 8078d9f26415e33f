import Foundation
import Networking

/// How a client reaches ViSearch and ProductSearch (the hosted services or
/// `vsearch serve`): a plain value, no singleton and no setup call.
///
/// ```swift
/// let hosted = ClientConfiguration(credentials: .accessKey("KEY", secret: "SECRET"))
/// let local = ClientConfiguration(baseURL: URL(string: "http://127.0.0.1:8080")!, credentials: .appKey("dev"))
/// let client = ViSearchClient(configuration: local)
/// ```
public struct ClientConfiguration: Sendable, Hashable {
    /// How ViSearch requests are authenticated.
    public enum Credentials: Sendable, Hashable, CustomStringConvertible {
        /// An app key, sent as the query parameter `access_key` (the mobile SDKs' mode).
        case appKey(String)
        /// Access key and secret, sent as HTTP Basic authorisation (the server SDKs' mode).
        case accessKey(String, secret: String)
        /// Nothing (a local server with no keys configured).
        case none

        /// The key that identifies the caller, if any.
        public var key: String? {
            switch self {
            case .appKey(let key), .accessKey(let key, _): key
            case .none: nil
            }
        }

        /// Never shows a key or a secret.
        public var description: String {
            switch self {
            case .appKey: "app key ***"
            case .accessKey: "access key *** with secret ***"
            case .none: "no credentials"
            }
        }
    }

    /// `https://visearch.visenze.com`, the hosted ViSearch service.
    public static let viSearchURL = URL(string: "https://visearch.visenze.com")!
    /// `https://visearch.visenze.com.cn`, the hosted service in China.
    public static let viSearchChinaURL = URL(string: "https://visearch.visenze.com.cn")!
    /// The library version reported in the user agent.
    public static let version = VSearchVersion.current

    /// Where ViSearch requests go: ``viSearchURL`` by default.
    public var baseURL: URL
    public var credentials: Credentials
    /// Where ProductSearch requests go. Default: the same server as ViSearch,
    /// the app key of ``credentials``, placement 1 — what `vsearch serve` answers.
    public var productSearch: ProductSearchConfiguration?
    /// Seconds without progress before a request fails: 10 by default (as the Swift SDK).
    public var timeout: Double
    public var retry: RetryPolicy
    /// Largest answer accepted: 32 MiB by default.
    public var maxResponseBytes: Int
    /// Sent as `User-Agent` and, as the SDKs do, `X-Requested-With`.
    public var userAgent: String

    public init(baseURL: URL = ClientConfiguration.viSearchURL, credentials: Credentials,
                productSearch: ProductSearchConfiguration? = nil, timeout: Double = 10, retry: RetryPolicy = .default,
                maxResponseBytes: Int = 32 << 20, userAgent: String = "vsearch-swift/\(ClientConfiguration.version)") {
        self.baseURL = baseURL
        self.credentials = credentials
        self.productSearch = productSearch
        self.timeout = timeout
        self.retry = retry
        self.maxResponseBytes = maxResponseBytes
        self.userAgent = userAgent
    }

    /// The ProductSearch settings in effect.
    public var effectiveProductSearch: ProductSearchConfiguration {
        productSearch ?? ProductSearchConfiguration(baseURL: baseURL, appKey: credentials.key ?? "", placementID: 1)
    }
}

/// Where ProductSearch is and who calls it: `app_key` and `placement_id`
/// travel as parameters on every call.
public struct ProductSearchConfiguration: Sendable, Hashable {
    /// `https://multimodal.search.rezolve.com`, the hosted service (legacy `v1/product/…` paths).
    public static let productSearchURL = URL(string: "https://multimodal.search.rezolve.com")!

    public var baseURL: URL
    public var appKey: String
    public var placementID: Int

    public init(baseURL: URL = ProductSearchConfiguration.productSearchURL, appKey: String, placementID: Int) {
        self.baseURL = baseURL
        self.appKey = appKey
        self.placementID = placementID
    }

    /// Whether the host uses `v1/visearch/…` paths (the cloud-specific hosts
    /// `multisearch-aw`/`-az.rezolve.com`) instead of the legacy `v1/product/…`.
    public var usesViSearchPaths: Bool {
        let host = baseURL.host ?? ""
        return host.hasPrefix("multisearch-aw.") || host.hasPrefix("multisearch-az.")
    }
}
