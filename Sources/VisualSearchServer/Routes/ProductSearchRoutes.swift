import Foundation
import Hummingbird
import VisualSearch

/// ProductSearch (wire-protocol.md §4.1), under both the legacy
/// `v1/product/…` paths and the cloud hosts' `v1/visearch/…` paths.
struct ProductSearchRoutes: Sendable {
    let engine: VisualSearchEngine
    let endpoint: Endpoint
    let viSearch: ViSearchRoutes

    func register(on router: Router<ServerContext>) {
        for prefix in ["v1/product", "v1/visearch"] {
            let search: @Sendable (Request, ServerContext) async -> Response = { request, context in
                let requestID = context.requestID
                return await endpoint.run(request, context: context, family: .productSearch, method: "product/search_by_image") { parameters throws(ServerError) in
                    try searchByImage(parameters, requestID)
                }
            }
            router.post(RouterPath("\(prefix)/search_by_image")) { request, context in await search(request, context) }
            router.get(RouterPath("\(prefix)/search_by_image")) { request, context in await search(request, context) }
            let recommend: @Sendable (Request, ServerContext) async -> Response = { request, context in
                let requestID = context.requestID
                let productID = context.parameters.get("product_id") ?? ""
                return await endpoint.run(request, context: context, family: .productSearch, method: "product/recommendations") { parameters throws(ServerError) in
                    try recommendations(productID: productID.removingPercentEncoding ?? productID, parameters, requestID)
                }
            }
            router.get(RouterPath("\(prefix)/recommendations/:product_id")) { request, context in await recommend(request, context) }
            router.post(RouterPath("\(prefix)/recommendations/:product_id")) { request, context in await recommend(request, context) }
        }
    }

    func searchByImage(_ request: RequestParameters, _ requestID: String) throws(ServerError) -> ProductSearchResponse {
        try Self.requirePlacement(request)
        let parameters = try ViSearchRoutes.parameters(request, dialect: .productSearch)
        let image = try viSearch.queryImage(request)
        let box = try ViSearchRoutes.box(request.query.string("box"), name: "box")
        var response = try ViSearchRoutes.engineCall { () throws(VisualSearchError) in
            try engine.productSearch(byImage: image, box: box, parameters: parameters)
        }
        response.requestID = requestID
        return response
    }

    func recommendations(productID: String, _ request: RequestParameters, _ requestID: String) throws(ServerError) -> ProductSearchResponse {
        try Self.requirePlacement(request)
        let parameters = try ViSearchRoutes.parameters(request, dialect: .productSearch)
        var response = try ViSearchRoutes.engineCall { () throws(VisualSearchError) in
            try engine.productRecommendations(productID: productID, parameters: parameters)
        }
        response.requestID = requestID
        return response
    }

    /// `placement_id` must be an integer when given (JS may send `strategy_id` instead).
    static func requirePlacement(_ request: RequestParameters) throws(ServerError) {
        _ = try ViSearchRoutes.engineCall { () throws(VisualSearchError) in try request.query.int("placement_id") }
    }
}
