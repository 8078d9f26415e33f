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
