/// ViSearch `/search`: images similar to a catalog image (the image itself
/// included, with score 1).
///
/// ```swift
/// let response = try await service.search(SearchRequest(imageName: "chelsea_cat", parameters: parameters))
/// ```
public struct SearchRequest: WireRequest {
    public typealias Response = SearchResponse
    public var imageName: String
    public var parameters: SearchParameters

    public init(imageName: String, parameters: SearchParameters = SearchParameters()) {
        self.imageName = imageName
        self.parameters = parameters
    }

    public static let endpoint = WireEndpoint(family: .viSearch, method: "search", paths: ["search"], body: .none)

    public func wireMessage() throws(VisualSearchError) -> WireMessage {
        var query = parameters.wireQuery(for: .viSearch)
        query.append("im_name", imageName)
        return WireMessage(query: query)
    }

    public init(wire: WireMessage) throws(VisualSearchError) {
        self.init(imageName: try wire.query.required("im_name"), parameters: try SearchParameters(wire: wire.query, dialect: .viSearch))
    }
}
