import Foundation
import ImageOps
import Networking

/// A typed async client for the ViSearch and ProductSearch APIs — the hosted
/// services or `vsearch serve` — and the HTTP implementation of
/// ``VisualSearchService``: the same requests and answers as the offline engine.
///
/// Requests are encoded by the request types themselves (``WireRequest``),
/// exactly as the ViSearch Swift SDK sends them (sorted query parameters,
/// repeated `fq`/`fl`/`facets`, its percent-encoding, a multipart body holding
/// only the `image`), so any server that understands the SDK understands
/// this client. Upload images are prepared as the SDK does (fit inside
/// 512 px at JPEG 0.97 by default, EXIF orientation baked in) and a box is
/// scaled into the prepared image. Everything goes through the one HTTP
/// layer (``HTTPClient``): idle timeout, size cap, retries with backoff.
///
/// ```swift
/// let client = ViSearchClient(configuration: ClientConfiguration(
///     baseURL: URL(string: "http://127.0.0.1:8080")!, credentials: .appKey("dev")))
/// var parameters = SearchParameters()
/// parameters.filters = [Filter(field: "brand", value: "acme")]
/// let response = try await client.uploadSearch(UploadSearchRequest(ImageQuery(.file("photo.jpg")), parameters: parameters))
/// print(response.result.map(\.imageName))
/// ```
public struct ViSearchClient: VisualSearchService {
    public typealias Failure = ClientError

    public let configuration: ClientConfiguration
    let http: HTTPClient

    /// Creates a client; `transport` defaults to URLSession, `sleep` (the
    /// waits between retries) to a real sleep.
    public init(configuration: ClientConfiguration, transport: (any HTTPTransport)? = nil,
                sleep: @escaping @Sendable (Double) async throws -> Void = HTTPClient.defaultSleep) {
        self.configuration = configuration
        http = HTTPClient(transport: transport ?? URLSessionTransport(maxResponseBytes: configuration.maxResponseBytes),
                          retry: configuration.retry, sleep: sleep)
    }

    public func search(_ request: SearchRequest) async throws(ClientError) -> SearchResponse { try await send(request) }
    public func recommendations(_ request: RecommendationsRequest) async throws(ClientError) -> SearchResponse { try await send(request) }
    public func colorSearch(_ request: ColorSearchRequest) async throws(ClientError) -> SearchResponse { try await send(request) }

    /// Boxes in the answer (`product_types`) are in the pixels of the image as given, not as uploaded.
    public func uploadSearch(_ request: UploadSearchRequest) async throws(ClientError) -> SearchResponse {
        var prepared = request
        var scale = 1.0
        do { prepared.query = try request.query.prepared { scale = $0 } } catch { throw .invalidRequest(error.description) }
        return try await send(prepared).boxesInCallerPixels(preparedAt: scale)
    }

    /// Boxes in the answer (`objects`) are in the pixels of the image as given, not as uploaded.
    public func discoverSearch(_ request: DiscoverSearchRequest) async throws(ClientError) -> SearchResponse {
        let prepared: DiscoverSearchRequest
        var scale = 1.0
        do { prepared = try request.prepared { scale = $0 } } catch { throw .invalidRequest(error.description) }
        return try await send(prepared).boxesInCallerPixels(preparedAt: scale)
    }

    public func productSearch(_ request: ProductSearchRequest) async throws(ClientError) -> ProductSearchResponse {
        var prepared = request
        prepared.query = try Self.prepare(request.query)
        return try await send(prepared)
    }

    public func productRecommendations(_ request: ProductRecommendationsRequest) async throws(ClientError) -> ProductSearchResponse {
        try await send(request)
    }

    public func insert(_ request: InsertRequest) async throws(ClientError) -> DataAPIResponse { try await send(request) }
    public func insertStatus(_ request: InsertStatusRequest) async throws(ClientError) -> InsertStatusResponse { try await send(request) }
    public func remove(_ request: RemoveRequest) async throws(ClientError) -> DataAPIResponse { try await send(request) }

    // MARK: - The request loop

    /// Sends any request: its wire form, the credentials, retries, the status and the body checked, the answer decoded.
    public func send<Request: WireRequest>(_ request: Request) async throws(ClientError) -> Request.Response {
        let message: WireMessage
        do { message = try request.wireMessage() } catch { throw .invalidRequest(error.message) }
        let endpoint = Request.endpoint
        let http = try httpRequest(endpoint, message)
        let response: HTTPClientResponse
        do { response = try await self.http.send(http, idempotent: endpoint.isIdempotent) } catch {
            throw ClientError(error)
        }
        let location = Redaction.url(http.url)
        guard (200..<300).contains(response.status) else {
            throw .http(status: response.status, url: location, message: ClientResponseBody.message(in: response.body))
        }
        return try ClientResponseBody.decode(Request.Response.self, from: response.body, url: location)
    }

    /// The HTTP request for a wire message: path, query string (with the
    /// credentials), and the body the endpoint travels in.
    func httpRequest(_ endpoint: WireEndpoint, _ message: WireMessage) throws(ClientError) -> HTTPClientRequest {
        var headers: [(name: String, value: String)] = [("Accept", "application/json"), ("User-Agent", configuration.userAgent),
                                                        ("X-Requested-With", configuration.userAgent)]
        // The parameters travel in the query string, or (data API) as a form body.
        var query = endpoint.body == .form ? WireQuery() : message.query
        var body: [UInt8]?
        switch endpoint.body {
        case .none:
            break
        case .multipartImage:
            if let image = message.image {
                var form = MultipartForm()
                form.append(file: "image", filename: "image.jpeg", contentType: "image/jpeg", data: image)
                body = form.encoded
                headers.append(("Content-Type", form.contentType))
            } else if endpoint.family == .viSearch {
                // As the Swift SDK: with no image, ViSearch still gets a (zero-part) multipart body;
                // ProductSearch a POST with no body at all.
                let form = MultipartForm()
                body = form.encoded
                headers.append(("Content-Type", form.contentType))
            }
        case .form:
            body = Array(message.query.encoded.utf8)
            headers.append(("Content-Type", "application/x-www-form-urlencoded"))
        }
        let base: URL
        var path = endpoint.path(parameter: message.pathParameter)
        switch endpoint.family {
        case .productSearch:
            let product = configuration.effectiveProductSearch
            base = product.baseURL
            if product.usesViSearchPaths, endpoint.paths.count > 1 {
                path = endpoint.paths[1].replacingOccurrences(of: "{id}", with: WireQuery.escapePathSegment(message.pathParameter ?? ""))
            }
            query.append("app_key", product.appKey)
            query.append("placement_id", String(product.placementID))
        case .viSearch, .tracking:
            base = configuration.baseURL
            switch configuration.credentials {
            case .appKey(let key): query.append("access_key", key)
            case .accessKey(let key, let secret):
                headers.append(("Authorization", "Basic " + Data("\(key):\(secret)".utf8).base64EncodedString()))
            case .none: break
            }
        }
        var text = base.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        text += "/" + path
        let encoded = query.encoded
        if !encoded.isEmpty { text += "?" + encoded }
        guard let url = URL(string: text) else { throw .invalidRequest("cannot form a URL for \(endpoint.method)") }
        let method = endpoint.body == .none ? "GET" : "POST"
        return HTTPClientRequest(method: method, url: url, headers: headers, body: body, timeout: configuration.timeout)
    }

    /// Prepares an upload as the SDKs do; errors say what is wrong with the image.
    static func prepare(_ query: ImageQuery) throws(ClientError) -> ImageQuery {
        do { return try query.prepared() } catch { throw .invalidRequest(error.description) }
    }
}
