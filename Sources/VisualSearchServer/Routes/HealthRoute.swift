import Hummingbird
import SearchEngine
import VisualSearch

/// `GET /health`: whether the server and its catalog answer.
public struct HealthRoute: Sendable {
    public let store: any CatalogReader
    let endpoint: EndpointFrame

    public init(store: any CatalogReader, settings: EndpointSettings) {
        self.store = store
        endpoint = EndpointFrame(settings: settings)
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
                                auth: endpoint.settings.credentials.isOpen ? "open" : "keys")
                } catch {
                    throw .engine(error)
                }
            }
        }
    }
}
