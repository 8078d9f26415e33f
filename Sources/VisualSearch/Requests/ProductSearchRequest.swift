/// ProductSearch `search_by_image`: products similar to an image, an
/// `im_url` or an `im_id`. `app_key` and `placement_id` are the client's
/// configuration, added to every call; the server checks them.
public struct ProductSearchRequest: ImageQueryRequest {
    public typealias Response = ProductSearchResponse
    public var query: ImageQuery
    public var parameters: SearchParameters
    public static let endpoint = WireEndpoint(
        family: .productSearch, method: "product/search_by_image",
        paths: ["v1/product/search_by_image", "v1/visearch/search_by_image"], body: .multipartImage)

    public init(_ query: ImageQuery, parameters: SearchParameters = SearchParameters()) {
        self.query = query
        self.parameters = parameters
    }
}

/// ProductSearch `recommendations/{product_id}`.
public struct ProductRecommendationsRequest: WireRequest {
    public typealias Response = ProductSearchResponse
    public var productID: String
    public var parameters: SearchParameters

    public init(productID: String, parameters: SearchParameters = SearchParameters()) {
        self.productID = productID
        self.parameters = parameters
    }

    public static let endpoint = WireEndpoint(
        family: .productSearch, method: "product/recommendations",
        paths: ["v1/product/recommendations/{id}", "v1/visearch/recommendations/{id}"], body: .none)

    public func wireMessage() throws(VisualSearchError) -> WireMessage {
        guard !productID.isEmpty else { throw .invalidParameter(name: "product_id", reason: "empty") }
        return WireMessage(query: parameters.wireQuery(for: .productSearch), pathParameter: productID)
    }

    public init(wire: WireMessage) throws(VisualSearchError) {
        _ = try wire.query.int("placement_id")  // an integer when given (JS may send strategy_id instead)
        guard let id = wire.pathParameter, !id.isEmpty else { throw .invalidParameter(name: "product_id", reason: "required") }
        self.init(productID: id, parameters: try SearchParameters(wire: wire.query, dialect: .productSearch))
    }
}
