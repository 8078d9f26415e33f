import Foundation

/// Which API an endpoint belongs to. It decides parameter names, path
/// prefixes and the shape of error bodies.
public enum APIFamily: String, Sendable, Hashable {
    /// `/search`, `/uploadsearch`, … and the data API: errors as `{"status":"fail","error":["…"]}`.
    case viSearch
    /// `v1/product/…`: errors as `{"status":"fail","error":{"code":…,"message":…}}`.
    case productSearch
    /// The analytics collector `/v3/…`.
    case tracking
}

/// How an endpoint travels over HTTP, for both the client that sends it and
/// the server that routes it.
public struct WireEndpoint: Sendable, Hashable {
    /// How the client sends the parameters.
    public enum Body: Sendable, Hashable {
        /// `GET` with every parameter in the query string.
        case none
        /// `POST` with the parameters in the query string and a multipart
        /// body holding only the `image` (possibly zero parts), as the Swift SDK does.
        case multipartImage
        /// `POST` with the parameters as an `application/x-www-form-urlencoded` body.
        case form
    }

    public var family: APIFamily
    /// The `method` a response names, e.g. `search`, `product/search_by_image`.
    public var method: String
    /// The paths the server answers, the first being what the client sends;
    /// `{id}` stands for ``WireMessage/pathParameter``.
    public var paths: [String]
    public var body: Body
    /// Whether a retry can never do harm (false for `/insert`).
    public var isIdempotent: Bool

    public init(family: APIFamily, method: String, paths: [String], body: Body, isIdempotent: Bool = true) {
        self.family = family
        self.method = method
        self.paths = paths
        self.body = body
        self.isIdempotent = isIdempotent
    }

    /// The path the client sends, with the path parameter filled in (escaped).
    public func path(parameter: String?) -> String {
        guard let parameter else { return paths[0] }
        return paths[0].replacingOccurrences(of: "{id}", with: WireQuery.escapePathSegment(parameter))
    }
}

/// A request as it travels: parameters (query string or form body), the
/// multipart `image`, and a path parameter.
public struct WireMessage: Sendable, Hashable {
    public var query: WireQuery
    /// The uploaded image's bytes, when a multipart `image` part carried one.
    public var image: [UInt8]?
    /// `{product_id}` or `{trans_id}`, unescaped.
    public var pathParameter: String?

    public init(query: WireQuery = WireQuery(), image: [UInt8]? = nil, pathParameter: String? = nil) {
        self.query = query
        self.image = image
        self.pathParameter = pathParameter
    }
}

/// A typed request whose wire form is defined in exactly one place: the
/// client encodes it with ``wireMessage()``, the server decodes it with
/// ``init(wire:)``, and tests check that the two are inverse.
public protocol WireRequest: Sendable, Hashable {
    /// What the endpoint answers with.
    associatedtype Response: Codable & Sendable
    /// How the endpoint travels.
    static var endpoint: WireEndpoint { get }
    /// The request as the SDKs send it.
    /// - Throws: ``VisualSearchError/invalidParameter(name:reason:)`` when a
    ///   part cannot travel as is (a local file must be prepared into bytes first).
    func wireMessage() throws(VisualSearchError) -> WireMessage
    /// Reads a request leniently, as a server must, and validates it.
    /// - Throws: ``VisualSearchError/invalidParameter(name:reason:)`` naming the parameter.
    init(wire: WireMessage) throws(VisualSearchError)
    /// `response` as a server sends it for a request it calls `requestID`:
    /// stamped (`reqid`) when the response carries one (``RequestIdentified``),
    /// unchanged otherwise.
    static func identifying(_ response: Response, as requestID: String?) -> Response
}

extension WireRequest {
    public static func identifying(_ response: Response, as requestID: String?) -> Response { response }
}

extension WireRequest where Response: RequestIdentified {
    public static func identifying(_ response: Response, as requestID: String?) -> Response {
        var response = response
        response.requestID = requestID
        return response
    }
}

extension WireQuery {
    /// The value of a required parameter.
    /// - Throws: ``VisualSearchError/invalidParameter(name:reason:)`` when it is missing or empty.
    public func required(_ name: String) throws(VisualSearchError) -> String {
        guard let value = string(name) else { throw .invalidParameter(name: name, reason: "required") }
        return value
    }

    /// Percent-encodes one path segment (`/`, `?` and `#` included).
    public static func escapePathSegment(_ text: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/?#")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}
