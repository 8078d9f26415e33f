/// ViSearch `/search`: images similar to a catalog image (the image itself
/// included, with score 1).
///
/// ```swift
/// let response = try await service.search(SearchRequest(imageName: "chelsea_cat", parameters: parameters))
/// ```
public struct SearchRequest: CatalogImageRequest {
    public typealias Response = SearchResponse
    public var imageName: String
    public var parameters: SearchParameters
    public static let endpoint = WireEndpoint(family: .viSearch, method: "search", paths: ["search"], body: .none)

    public init(imageName: String, parameters: SearchParameters = SearchParameters()) {
        self.imageName = imageName
        self.parameters = parameters
    }
}
