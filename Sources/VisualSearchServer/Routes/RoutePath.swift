import Foundation
import VisualSearch

/// Path → API family and method name, for errors raised before a route runs.
enum RoutePath {
    static func family(of path: String) -> APIFamily {
        if path.hasPrefix("/v1/") { return .productSearch }
        if path.hasPrefix("/v3/") { return .tracking }
        return .viSearch
    }

    static func method(of path: String) -> String {
        let trimmed = path.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        if trimmed.hasPrefix("v1/product/") || trimmed.hasPrefix("v1/visearch/") {
            return "product/" + (trimmed.split(separator: "/").dropFirst(2).first.map(String.init) ?? "")
        }
        return trimmed.split(separator: "/").first.map(String.init) ?? ""
    }
}
