/// ViSearch `/recommendations` (also answered as `/recommendation`, which
/// the Python and PHP SDKs call): similar items for a catalog image, the
/// image itself excluded and near-duplicates removed.
public struct RecommendationsRequest: CatalogImageRequest {
    public typealias Response = SearchResponse
    public var imageName: String
    public var parameters: SearchParameters
    public static let endpoint = WireEndpoint(family: .viSearch, method: "recommendations",
                                              paths: ["recommendations", "recommendation"], body: .none)

    public init(imageName: String, parameters: SearchParameters = SearchParameters()) {
        self.imageName = imageName
        self.parameters = parameters
    }
}
