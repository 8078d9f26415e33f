import Hummingbird
import SearchEngine
import VisualSearch

/// `GET /health`: whether the server and its catalog answer, and — as
/// `warning` — when the catalog holds learned vectors this server cannot
/// search with (no model installed, or another one), so uploads are answered by colour.
public struct HealthRoute: Sendable {
    public let store: any CatalogReader
    /// The learned model this server embeds uploads with; nil: none.
    public let installed: EmbeddingDescriptor?
    let endpoint: EndpointFrame

    public init(store: any CatalogReader, installed: EmbeddingDescriptor? = nil, settings: EndpointSettings) {
        self.store = store
        self.installed = installed
        endpoint = EndpointFrame(settings: settings)
    }

    struct Body: Encodable, Sendable {
        var status = "OK"
        var images: Int
        var catalogVersion: Int
        var auth: String
        var warning: String?
        enum CodingKeys: String, CodingKey {
            case status, images, catalogVersion = "catalog_version", auth, warning
        }
    }

    /// Adds `GET /health` to `router`.
    public func register<Context: VisualSearchRequestContext>(on router: Router<Context>) {
        router.get("health") { request, context in
            await endpoint.run(request, context: context, family: .viSearch, method: "health", authenticated: false) { _ throws(ServerError) in
                do throws(CatalogStoreError) {
                    let warning = VisualSearchEngine.learnedModelNotice(catalogModel: try await store.learnedModel(), installed: installed)
                    return Body(images: try await store.count(), catalogVersion: try await store.version(),
                                auth: endpoint.settings.credentials.isOpen ? "open" : "keys", warning: warning)
                } catch {
                    throw error.served
                }
            }
        }
    }
}
