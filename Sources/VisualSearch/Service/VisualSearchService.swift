/// Something that answers ViSearch and ProductSearch requests: the offline
/// engine (`SearchEngine.VisualSearchEngine`), the HTTP client
/// (``ViSearchClient``, to the hosted service or a `vsearch serve`), or a
/// test double.
///
/// Every endpoint takes one typed request whose wire form lives with the
/// request type (``WireRequest``), so the client encodes and the server
/// decodes through the same code. A program written against this protocol
/// runs unchanged offline and against a server:
///
/// ```swift
/// func similar<S: VisualSearchService>(to name: String, in service: S) async throws(S.Failure) -> [String] {
///     try await service.search(SearchRequest(imageName: name)).result.map(\.imageName)
/// }
/// ```
public protocol VisualSearchService: Sendable {
    /// The error the service throws: ``VisualSearchError`` for the engine,
    /// ``ClientError`` for the client.
    associatedtype Failure: Error & CustomStringConvertible

    /// ViSearch `/search`: images similar to a catalog image.
    func search(_ request: SearchRequest) async throws(Failure) -> SearchResponse
    /// ViSearch `/recommendations`: similar items, the image itself excluded, near-duplicates removed.
    func recommendations(_ request: RecommendationsRequest) async throws(Failure) -> SearchResponse
    /// ViSearch `/uploadsearch`: images similar to an uploaded image, a URL or an earlier `im_id`.
    func uploadSearch(_ request: UploadSearchRequest) async throws(Failure) -> SearchResponse
    /// ViSearch `/colorsearch`: images by colour.
    func colorSearch(_ request: ColorSearchRequest) async throws(Failure) -> SearchResponse
    /// ViSearch `/discoversearch`: results per object of an image.
    func discoverSearch(_ request: DiscoverSearchRequest) async throws(Failure) -> SearchResponse
    /// ProductSearch `search_by_image`.
    func productSearch(_ request: ProductSearchRequest) async throws(Failure) -> ProductSearchResponse
    /// ProductSearch `recommendations/{product_id}`.
    func productRecommendations(_ request: ProductRecommendationsRequest) async throws(Failure) -> ProductSearchResponse
    /// Data API `/insert`: adds or replaces images asynchronously; returns a transaction id.
    func insert(_ request: InsertRequest) async throws(Failure) -> DataAPIResponse
    /// Data API `/insert/status/{trans_id}`.
    func insertStatus(_ request: InsertStatusRequest) async throws(Failure) -> InsertStatusResponse
    /// Data API `/remove`.
    func remove(_ request: RemoveRequest) async throws(Failure) -> DataAPIResponse
}
