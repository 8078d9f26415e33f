import Foundation
import Hummingbird
import VisualSearch

/// The ViSearch, ProductSearch and data API endpoints, answered by any
/// ``VisualSearchService`` — the offline engine for `vsearch serve`, or
/// anything else that conforms (a client, to proxy).
///
/// Each endpoint is one line: the request type knows its paths and how to
/// read itself from the wire (``WireRequest``); the route only merges
/// parameters, authenticates (``EndpointFrame``), decodes, calls the service
/// and stamps the request id. GET and POST are accepted everywhere: the
/// SDKs disagree on methods.
///
/// Mount them in your own Hummingbird application:
/// ```swift
/// let router = Router(context: MyContext.self)          // MyContext: VisualSearchRequestContext
/// ServiceRoutes(service: engine, settings: EndpointSettings()).register(on: router)
/// ```
public struct ServiceRoutes<Service: VisualSearchService>: Sendable where Service.Failure: ServedFailure {
    public let service: Service
    let frame: EndpointFrame

    public init(service: Service, settings: EndpointSettings) {
        self.service = service
        frame = EndpointFrame(settings: settings)
    }

    /// Adds every endpoint to `router`.
    public func register<Context: VisualSearchRequestContext>(on router: Router<Context>) {
        let service = self.service
        add(SearchRequest.self, on: router) { (request) throws(Service.Failure) in try await service.search(request) }
        add(RecommendationsRequest.self, on: router) { (request) throws(Service.Failure) in try await service.recommendations(request) }
        add(UploadSearchRequest.self, on: router) { (request) throws(Service.Failure) in try await service.uploadSearch(request) }
        add(ColorSearchRequest.self, on: router) { (request) throws(Service.Failure) in try await service.colorSearch(request) }
        add(DiscoverSearchRequest.self, on: router) { (request) throws(Service.Failure) in try await service.discoverSearch(request) }
        add(ProductSearchRequest.self, on: router) { (request) throws(Service.Failure) in try await service.productSearch(request) }
        add(ProductRecommendationsRequest.self, on: router) { (request) throws(Service.Failure) in try await service.productRecommendations(request) }
        // The data API changes the catalog: an access key with its secret, never an app key (RoutePath.dataAPIPaths).
        add(InsertRequest.self, on: router, methods: [.post], needs: .access) { (request) throws(Service.Failure) in try await service.insert(request) }
        add(InsertStatusRequest.self, on: router, methods: [.get], needs: .access) { (request) throws(Service.Failure) in try await service.insertStatus(request) }
        add(RemoveRequest.self, on: router, methods: [.post], needs: .access) { (request) throws(Service.Failure) in try await service.remove(request) }
    }

    /// One endpoint: every path of the request type, for each method.
    func add<Request: WireRequest, Context: VisualSearchRequestContext>(
        _ type: Request.Type, on router: Router<Context>, methods: [HTTPRequest.Method] = [.get, .post], needs role: ServerCredentials.Role = .app,
        _ call: @escaping @Sendable (Request) async throws(Service.Failure) -> Request.Response
    ) {
        let endpoint = Request.endpoint
        let frame = self.frame
        let respond: @Sendable (Hummingbird.Request, Context) async -> Response = { request, context in
            let pathParameter = context.parameters.get("id").map { $0.removingPercentEncoding ?? $0 }
            let requestID = context.requestID
            return await frame.run(request, context: context, family: endpoint.family, method: endpoint.method, needs: role) { parameters throws(ServerError) in
                let message = WireMessage(query: parameters.query, image: parameters.image, pathParameter: pathParameter)
                let typed: Request
                do throws(VisualSearchError) { typed = try Request(wire: message) } catch { throw .engine(error) }
                try frame.settings.queries.check(typed)
                let response: Request.Response
                do throws(Service.Failure) { response = try await call(typed) } catch { throw error.served }
                return Request.identifying(response, as: requestID)
            }
        }
        for path in endpoint.paths {
            let routerPath = RouterPath(path.replacingOccurrences(of: "{id}", with: ":id"))
            for method in methods { router.on(routerPath, method: method) { request, context in await respond(request, context) } }
        }
    }
}
