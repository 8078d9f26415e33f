/// ViSearch `/colorsearch`: images ranked by how much of them is near a colour.
///
/// ```swift
/// let request = ColorSearchRequest(color: try HexColor(parsing: "#f0f"))   // sent as color=ff00ff
/// ```
public struct ColorSearchRequest: WireRequest {
    public typealias Response = SearchResponse
    public var color: HexColor
    public var parameters: SearchParameters

    public init(color: HexColor, parameters: SearchParameters = SearchParameters()) {
        self.color = color
        self.parameters = parameters
    }

    public static let endpoint = WireEndpoint(family: .viSearch, method: "colorsearch", paths: ["colorsearch"], body: .none)

    public func wireMessage() throws(VisualSearchError) -> WireMessage {
        var query = parameters.wireQuery(for: .viSearch)
        query.append("color", color.hex)
        return WireMessage(query: query)
    }

    public init(wire: WireMessage) throws(VisualSearchError) {
        self.init(color: try HexColor(parsing: try wire.query.required("color")),
                  parameters: try SearchParameters(wire: wire.query, dialect: .viSearch))
    }
}
