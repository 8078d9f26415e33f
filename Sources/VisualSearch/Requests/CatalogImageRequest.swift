/// A request about one catalog image named by `im_name` — `/search` and
/// `/recommendations` travel the same way and differ only in their endpoint.
public protocol CatalogImageRequest: WireRequest where Response == SearchResponse {
    var imageName: String { get }
    var parameters: SearchParameters { get }
    init(imageName: String, parameters: SearchParameters)
}

extension CatalogImageRequest {
    public func wireMessage() throws(VisualSearchError) -> WireMessage {
        var query = parameters.wireQuery(for: .viSearch)
        query.append("im_name", imageName)
        return WireMessage(query: query)
    }

    public init(wire: WireMessage) throws(VisualSearchError) {
        self.init(imageName: try wire.query.required("im_name"), parameters: try SearchParameters(wire: wire.query, dialect: .viSearch))
    }
}

/// A request about a query image (bytes, a file, `im_url` or `im_id`) —
/// `/uploadsearch` and ProductSearch's `search_by_image` travel the same way
/// and differ in their endpoint and parameter names.
public protocol ImageQueryRequest: WireRequest {
    var query: ImageQuery { get set }
    var parameters: SearchParameters { get }
    init(_ query: ImageQuery, parameters: SearchParameters)
}

extension ImageQueryRequest {
    /// The parameter names of the endpoint's API family.
    static var dialect: SearchParameters.WireDialect { endpoint.family == .productSearch ? .productSearch : .viSearch }

    public func wireMessage() throws(VisualSearchError) -> WireMessage {
        var message = WireMessage(query: parameters.wireQuery(for: Self.dialect))
        try query.encode(into: &message)
        return message
    }

    public init(wire: WireMessage) throws(VisualSearchError) {
        if Self.endpoint.family == .productSearch { _ = try wire.query.int("placement_id") }
        self.init(try ImageQuery(wire: wire), parameters: try SearchParameters(wire: wire.query, dialect: Self.dialect))
    }
}
