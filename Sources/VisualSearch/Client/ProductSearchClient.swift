import Foundation
import ImageOps

/// A typed async client for ProductSearch — the hosted service or
/// `vsearch serve` — with `app_key` and `placement_id` on every call.
///
/// ```swift
/// let client = ProductSearchClient(configuration: ProductSearchConfiguration(
///     baseURL: URL(string: "http://127.0.0.1:8080")!, appKey: "dev", placementID: 1))
/// let found = try await client.searchByImage(.file("photo.jpg"), parameters: SearchParameters())
/// let recs = try await client.recommendations(productID: found.result?.first?.productID ?? "", parameters: SearchParameters())
/// ```
public struct ProductSearchClient: Sendable {
    public let configuration: ProductSearchConfiguration
    let requester: APIRequester

    /// Creates a client; `transport` defaults to URLSession.
    public init(configuration: ProductSearchConfiguration, transport: any HTTPTransport = URLSessionTransport(),
                sleep: (@Sendable (Double) async throws -> Void)? = nil) {
        self.configuration = configuration
        requester = APIRequester(baseURL: configuration.baseURL, timeout: configuration.timeout, retry: configuration.retry,
                                 headers: [("Accept", "application/json"), ("User-Agent", configuration.userAgent),
                                           ("X-Requested-With", configuration.userAgent)],
                                 transport: transport, sleep: sleep ?? APIRequester.defaultSleep)
    }

    /// `POST v1/product/search_by_image`: products similar to an image (prepared
    /// as for ViSearch uploads, the box scaled), an `im_url` or an `im_id`.
    public func searchByImage(_ image: QueryImage, box: PixelBox? = nil, parameters: SearchParameters,
                              settings: UploadSettings = .standard) async throws(ClientError) -> ProductSearchResponse {
        var query = try queryFor(parameters)
        let form = try ClientUpload.attach(image, box: box, settings: settings, to: &query)
        let body = form.map { (contentType: $0.contentType, bytes: $0.encoded) }
        // As the Swift SDK: with no image, a POST with no body and no Content-Type.
        let response = try await requester.send(method: "POST", path: "\(configuration.pathPrefix)/search_by_image", query: query, body: body)
        return try requester.decode(ProductSearchResponse.self, from: response, url: "search_by_image")
    }

    /// `GET v1/product/recommendations/{product_id}`.
    public func recommendations(productID: String, parameters: SearchParameters) async throws(ClientError) -> ProductSearchResponse {
        guard !productID.isEmpty else { throw .invalidRequest("product id is empty") }
        let escaped = productID.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/?#"))) ?? productID
        let response = try await requester.send(method: "GET", path: "\(configuration.pathPrefix)/recommendations/\(escaped)",
                                                query: try queryFor(parameters))
        return try requester.decode(ProductSearchResponse.self, from: response, url: "recommendations")
    }

    func queryFor(_ parameters: SearchParameters) throws(ClientError) -> WireQuery {
        do { try parameters.validate() } catch { throw .invalidRequest(error.message) }
        var query = parameters.wireQuery(for: .productSearch)
        query.append("app_key", configuration.appKey)
        query.append("placement_id", String(configuration.placementID))
        return query
    }
}
