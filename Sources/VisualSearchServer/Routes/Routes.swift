import Foundation
import Hummingbird
import VisualSearch

/// Path → API family and method name, for errors raised before a route runs.
enum Routes {
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

/// `GET /health`: whether the server and its catalog answer.
struct HealthRoute: Sendable {
    let catalog: Catalog
    let endpoint: Endpoint

    struct Body: Encodable, Sendable {
        var status = "OK"
        var images: Int
        var catalogVersion: Int
        var auth: String
        enum CodingKeys: String, CodingKey {
            case status, images, catalogVersion = "catalog_version", auth
        }
    }

    func register(on router: Router<ServerContext>) {
        router.get("health") { request, context in
            await endpoint.run(request, context: context, family: .viSearch, method: "health", authenticated: false) { _ throws(ServerError) in
                try ViSearchRoutes.engineCall { () throws(VisualSearchError) in
                    Body(images: try catalog.count(), catalogVersion: try catalog.version(),
                         auth: endpoint.configuration.credentials.isOpen ? "open" : "keys")
                }
            }
        }
    }
}
