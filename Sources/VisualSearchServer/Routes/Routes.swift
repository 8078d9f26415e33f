import Foundation
import Hummingbird
import SearchEngine
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
public struct HealthRoute: Sendable {
    public let store: any CatalogStore
    let endpoint: EndpointFrame

    public init(store: any CatalogStore, configuration: ServerConfiguration) {
        self.store = store
        endpoint = EndpointFrame(configuration: configuration)
    }

    struct Body: Encodable, Sendable {
        var status = "OK"
        var images: Int
        var catalogVersion: Int
        var auth: String
        enum CodingKeys: String, CodingKey {
            case status, images, catalogVersion = "catalog_version", auth
        }
    }

    /// Adds `GET /health` to `router`.
    public func register<Context: VisualSearchRequestContext>(on router: Router<Context>) {
        router.get("health") { request, context in
            await endpoint.run(request, context: context, family: .viSearch, method: "health", authenticated: false) { _ throws(ServerError) in
                do throws(VisualSearchError) {
                    return Body(images: try await store.count(), catalogVersion: try await store.version(),
                                auth: endpoint.configuration.credentials.isOpen ? "open" : "keys")
                } catch {
                    throw .engine(error)
                }
            }
        }
    }
}
