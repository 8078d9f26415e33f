import Foundation
import ImageOps

/// A typed async client for the ViSearch API — the hosted service or
/// `vsearch serve` — answering with the same value types as the offline
/// ``VisualSearchEngine``.
///
/// Requests are encoded exactly as the ViSearch Swift SDK sends them
/// (sorted query parameters, repeated `fq`/`fl`/`facets`, its
/// percent-encoding, every parameter in the query string and a multipart
/// body holding only the `image`), so any server that understands the SDK
/// understands this client. Upload images are prepared as the SDK does
/// (fit inside 512 px at JPEG 0.97 by default, EXIF orientation baked in)
/// and a box is scaled into the prepared image.
///
/// ```swift
/// let client = ViSearchClient(configuration: ClientConfiguration(
///     baseURL: URL(string: "http://127.0.0.1:8080")!, credentials: .appKey("dev")))
/// var parameters = SearchParameters()
/// parameters.filters = [Filter(field: "brand", value: "acme")]
/// let response = try await client.uploadSearch(.file("photo.jpg"), parameters: parameters)
/// print(response.result.map(\.imageName))
/// ```
public struct ViSearchClient: Sendable {
    public let configuration: ClientConfiguration
    let requester: APIRequester

    /// Creates a client; `transport` defaults to URLSession.
    public init(configuration: ClientConfiguration, transport: any HTTPTransport = URLSessionTransport()) {
        self.init(configuration: configuration, transport: transport, sleep: APIRequester.defaultSleep)
    }

    /// Creates a client whose backoff waits go through `sleep` (tests).
    public init(configuration: ClientConfiguration, transport: any HTTPTransport,
                sleep: @escaping @Sendable (Double) async throws -> Void) {
        self.configuration = configuration
        var headers: [(name: String, value: String)] = [("Accept", "application/json"), ("User-Agent", configuration.userAgent),
                                                        ("X-Requested-With", configuration.userAgent)]
        if case .accessKey(let key, let secret) = configuration.credentials {
            headers.append(("Authorization", "Basic " + Data("\(key):\(secret)".utf8).base64EncodedString()))
        }
        requester = APIRequester(baseURL: configuration.baseURL, timeout: configuration.timeout, retry: configuration.retry,
                                 headers: headers, transport: transport, sleep: sleep)
    }

    // MARK: - Search

    /// `GET /search`: images similar to a catalog image.
    public func search(imageName: String, parameters: SearchParameters) async throws(ClientError) -> SearchResponse {
        var query = try queryFor(parameters)
        query.append("im_name", imageName)
        return try await get("search", query: query)
    }

    /// `GET /recommendations`: similar items for a catalog image.
    public func recommendations(imageName: String, parameters: SearchParameters) async throws(ClientError) -> SearchResponse {
        var query = try queryFor(parameters)
        query.append("im_name", imageName)
        return try await get("recommendations", query: query)
    }

    /// `GET /colorsearch`: images by colour; `hex` is `ff00ff` or `#ff00ff` (sent without `#`).
    public func colorSearch(_ hex: String, parameters: SearchParameters) async throws(ClientError) -> SearchResponse {
        let color = hex.hasPrefix("#") ? String(hex.dropFirst()) : hex
        guard color.count == 6, color.allSatisfy(\.isHexDigit) else {
            throw .invalidRequest("color \"\(hex)\" is not six hex digits such as ff00ff")
        }
        var query = try queryFor(parameters)
        query.append("color", color.lowercased())
        return try await get("colorsearch", query: query)
    }

    /// `POST /uploadsearch`: images similar to an uploaded image (prepared
    /// with `settings`; a `box` in the original's pixels is scaled into the
    /// upload's), an `im_url` or an earlier `im_id`.
    public func uploadSearch(_ image: QueryImage, box: PixelBox? = nil, parameters: SearchParameters,
                             settings: UploadSettings = .standard) async throws(ClientError) -> SearchResponse {
        var query = try queryFor(parameters)
        let form = try upload(image, box: box, settings: settings, into: &query)
        return try await post("uploadsearch", query: query, form: form)
    }

    /// `POST /discoversearch`: results per object of an image.
    public func discoverSearch(_ image: QueryImage, box: PixelBox? = nil, parameters: SearchParameters,
                               resultLimit: Int? = nil, detectionLimit: Int? = nil,
                               settings: UploadSettings = .standard) async throws(ClientError) -> SearchResponse {
        var query = try queryFor(parameters)
        if let resultLimit { query.append("result_limit", String(resultLimit)) }
        if let detectionLimit { query.append("detection_limit", String(detectionLimit)) }
        let form = try upload(image, box: box, settings: settings, into: &query)
        return try await post("discoversearch", query: query, form: form)
    }

    // MARK: - Data API

    /// `POST /insert`: adds or replaces images by `im_name`; indexing runs
    /// asynchronously — poll ``insertStatus(transactionID:)``. Not retried
    /// after the request may have reached the server.
    public func insert(_ items: [InsertItem]) async throws(ClientError) -> DataAPIResponse {
        guard !items.isEmpty else { throw .invalidRequest("insert needs at least one image") }
        return try await postForm("insert", fields: InsertItem.wireQuery(items), idempotent: false)
    }

    /// `GET /insert/status/{trans_id}`.
    public func insertStatus(transactionID: String) async throws(ClientError) -> InsertStatusResponse {
        guard !transactionID.isEmpty, transactionID.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) else {
            throw .invalidRequest("\"\(transactionID)\" is not a transaction id")
        }
        let response = try await requester.send(method: "GET", path: "insert/status/\(transactionID)", query: authQuery())
        return try requester.decode(InsertStatusResponse.self, from: response, url: "insert/status")
    }

    /// `POST /remove`: removes images by `im_name`.
    public func remove(_ imageNames: [String]) async throws(ClientError) -> DataAPIResponse {
        guard !imageNames.isEmpty else { throw .invalidRequest("remove needs at least one im_name") }
        var fields = WireQuery()
        for (index, name) in imageNames.enumerated() { fields.append("im_name[\(index)]", name) }
        return try await postForm("remove", fields: fields, idempotent: true)
    }

    // MARK: - Plumbing

    func authQuery() -> WireQuery {
        var query = WireQuery()
        if case .appKey(let key) = configuration.credentials { query.append("access_key", key) }
        return query
    }

    func queryFor(_ parameters: SearchParameters) throws(ClientError) -> WireQuery {
        do { try parameters.validate() } catch { throw .invalidRequest(error.message) }
        var query = parameters.wireQuery(for: .viSearch)
        query.merge(authQuery())
        return query
    }

    /// The image source in the query, or a prepared image in the form; with
    /// no image the Swift SDK still posts a (zero-part) multipart body.
    func upload(_ image: QueryImage, box: PixelBox?, settings: UploadSettings, into query: inout WireQuery) throws(ClientError) -> MultipartForm {
        try ClientUpload.attach(image, box: box, settings: settings, to: &query) ?? MultipartForm()
    }

    func get<T: Decodable>(_ path: String, query: WireQuery) async throws(ClientError) -> T {
        let response = try await requester.send(method: "GET", path: path, query: query)
        return try requester.decode(T.self, from: response, url: path)
    }

    func post<T: Decodable>(_ path: String, query: WireQuery, form: MultipartForm) async throws(ClientError) -> T {
        let response = try await requester.send(method: "POST", path: path, query: query, body: (form.contentType, form.encoded))
        return try requester.decode(T.self, from: response, url: path)
    }

    func postForm<T: Decodable>(_ path: String, fields: WireQuery, idempotent: Bool) async throws(ClientError) -> T {
        let body = Array(fields.encoded.utf8)
        let response = try await requester.send(method: "POST", path: path, query: authQuery(),
                                                body: ("application/x-www-form-urlencoded", body), idempotent: idempotent)
        return try requester.decode(T.self, from: response, url: path)
    }
}

/// Upload preparation for the clients: read, prepare, scale the box.
enum ClientUpload {
    /// Puts the image source where the SDKs put it: a prepared image in a
    /// multipart form (the box scaled into it), or `im_url` / `im_id` in the
    /// query (the box as given). Returns the form when there is an image.
    static func attach(_ image: QueryImage, box: PixelBox?, settings: UploadSettings,
                       to query: inout WireQuery) throws(ClientError) -> MultipartForm? {
        switch image {
        case .bytes, .file:
            let prepared = try prepare(image, box: box, settings: settings)
            var form = MultipartForm()
            form.append(file: "image", filename: "image.jpeg", contentType: "image/jpeg", data: prepared.jpeg)
            if let box = prepared.box { query.append("box", box.description) }
            return form
        case .url(let url):
            query.append("im_url", url)
        case .imageID(let id):
            query.append("im_id", id)
        }
        if let box { query.append("box", box.description) }
        return nil
    }

    static func prepare(_ image: QueryImage, box: PixelBox?, settings: UploadSettings) throws(ClientError) -> PreparedUpload {
        do throws(ImageOpsError) {
            switch image {
            case .bytes(let bytes):
                return try UploadPreparation.prepare(bytes, source: "upload image", settings: settings, box: box)
            case .file(let path):
                return try UploadPreparation.prepare(try FileIO.read(path, maxBytes: ImageLimits.default.maxInputBytes),
                                                     source: path, settings: settings, box: box)
            default:
                throw ImageOpsError.invalidParameter(name: "image", reason: "only bytes and files are prepared for upload")
            }
        } catch {
            throw .invalidRequest(error.description)
        }
    }
}
