import Foundation
import VisualSearch

/// Path → API family and method name, for errors raised before a route runs;
/// and the one rule for which route a path reaches.
enum RoutePath {
    /// `path` as the router matches it: empty segments dropped, so
    /// `//uploadsearch` and `/uploadsearch/` are `/uploadsearch`. Admission
    /// (``RequestLane``), the exempt paths and the error shapes go by this
    /// form, so no spelling of a path reaches a route under another's rules.
    static func normalized(_ path: String) -> String {
        guard path.contains("//") || (path.count > 1 && path.hasSuffix("/")) || !path.hasPrefix("/") else { return path }
        return "/" + path.split(separator: "/", omittingEmptySubsequences: true).joined(separator: "/")
    }

    /// The data API's paths (`/insert`, `/insert/status/{id}`, `/remove`),
    /// from the request types.
    static let dataAPIPaths: [String] = [InsertRequest.endpoint, InsertStatusRequest.endpoint, RemoveRequest.endpoint]
        .flatMap(\.paths).map { "/" + $0 }

    /// The paths of searches answered on the processors the light lane
    /// shares — by `im_name`, recommendations, colour search — from the
    /// request types (``ClientLimiter``'s share of the processors).
    static let searchPaths: [String] = [SearchRequest.endpoint, RecommendationsRequest.endpoint, ColorSearchRequest.endpoint,
                                        ProductRecommendationsRequest.endpoint].flatMap(\.paths).map { "/" + $0 }

    /// Whether `path` reaches the data API, which changes the catalog and
    /// needs an access key with its secret (``ServerCredentials/Role/access``).
    static func isDataAPI(_ path: String) -> Bool {
        matches(path, any: dataAPIPaths)
    }

    /// Whether `path` is a search the engine answers on the shared processors.
    static func isSearch(_ path: String) -> Bool {
        matches(path, any: searchPaths)
    }

    /// Whether `path`, as the router matches it, is one of `patterns`, where
    /// a `{…}` segment stands for any one segment.
    static func matches(_ path: String, any patterns: [String]) -> Bool {
        let segments = normalized(path).split(separator: "/")
        return patterns.contains { pattern in
            let expected = pattern.split(separator: "/")
            return expected.count == segments.count && zip(expected, segments).allSatisfy { $0.hasPrefix("{") || $0 == $1 }
        }
    }

    static func family(of path: String) -> APIFamily {
        let path = normalized(path)
        if path.hasPrefix("/v1/") { return .productSearch }
        if path.hasPrefix("/v3/") { return .tracking }
        return .viSearch
    }

    static func method(of path: String) -> String {
        let trimmed = String(normalized(path).dropFirst())
        if trimmed.hasPrefix("v1/product/") || trimmed.hasPrefix("v1/visearch/") {
            return "product/" + (trimmed.split(separator: "/").dropFirst(2).first.map(String.init) ?? "")
        }
        return trimmed.split(separator: "/").first.map(String.init) ?? ""
    }
}
