import Foundation
import Hummingbird
import ImageOps
import VisualSearch

/// The ViSearch endpoints (wire-protocol.md §1.2), answered by the engine.
/// GET and POST are both accepted everywhere: the SDKs disagree on methods.
struct ViSearchRoutes: Sendable {
    let engine: VisualSearchEngine
    let endpoint: Endpoint

    func register(on router: Router<ServerContext>) {
        let routes: [(String, String, @Sendable (RequestParameters, String) async throws(ServerError) -> SearchResponse)] = [
            ("search", "search", { parameters, id throws(ServerError) in try search(parameters, id) }),
            // Python and PHP call the singular spelling.
            ("recommendations", "recommendations", { parameters, id throws(ServerError) in try recommendations(parameters, id) }),
            ("recommendation", "recommendations", { parameters, id throws(ServerError) in try recommendations(parameters, id) }),
            ("uploadsearch", "uploadsearch", { parameters, id throws(ServerError) in try uploadSearch(parameters, id) }),
            ("colorsearch", "colorsearch", { parameters, id throws(ServerError) in try colorSearch(parameters, id) }),
            ("discoversearch", "discoversearch", { parameters, id throws(ServerError) in try discoverSearch(parameters, id) }),
        ]
        for (path, method, handler) in routes {
            let respond: @Sendable (Request, ServerContext) async -> Response = { request, context in
                let requestID = context.requestID
                return await endpoint.run(request, context: context, family: .viSearch, method: method) { parameters throws(ServerError) in
                    try await handler(parameters, requestID)
                }
            }
            router.get(RouterPath(path)) { request, context in await respond(request, context) }
            router.post(RouterPath(path)) { request, context in await respond(request, context) }
        }
    }

    func search(_ request: RequestParameters, _ requestID: String) throws(ServerError) -> SearchResponse {
        let parameters = try Self.parameters(request)
        let name = try Self.required("im_name", in: request)
        return try Self.stamp(requestID) { () throws(VisualSearchError) in try engine.search(imageName: name, parameters: parameters) }
    }

    func recommendations(_ request: RequestParameters, _ requestID: String) throws(ServerError) -> SearchResponse {
        let parameters = try Self.parameters(request)
        let name = try Self.required("im_name", in: request)
        return try Self.stamp(requestID) { () throws(VisualSearchError) in try engine.recommendations(imageName: name, parameters: parameters) }
    }

    func colorSearch(_ request: RequestParameters, _ requestID: String) throws(ServerError) -> SearchResponse {
        let parameters = try Self.parameters(request)
        let color = try Self.required("color", in: request)
        guard color.count == 6 || (color.hasPrefix("#") && color.count == 7), color.drop(while: { $0 == "#" }).allSatisfy(\.isHexDigit) else {
            throw .engine(.invalidParameter(name: "color", reason: "\"\(color)\" is not six hex digits such as ff00ff"))
        }
        return try Self.stamp(requestID) { () throws(VisualSearchError) in try engine.colorSearch(color, parameters: parameters) }
    }

    func uploadSearch(_ request: RequestParameters, _ requestID: String) throws(ServerError) -> SearchResponse {
        let parameters = try Self.parameters(request)
        let image = try queryImage(request)
        let box = try Self.box(request.query.string("box"), name: "box")
        return try Self.stamp(requestID) { () throws(VisualSearchError) in try engine.uploadSearch(image, box: box, parameters: parameters) }
    }

    func discoverSearch(_ request: RequestParameters, _ requestID: String) throws(ServerError) -> SearchResponse {
        var parameters = try Self.parameters(request)
        if let resultLimit = try Self.engineCall({ () throws(VisualSearchError) in try request.query.int("result_limit") }) {
            parameters.limit = resultLimit
            try Self.engineCall { () throws(VisualSearchError) in try parameters.validate() }
        }
        let image = try queryImage(request)
        var boxes: [PixelBox] = []
        if let box = try Self.box(request.query.string("box"), name: "box") { boxes.append(box) }
        for point in request.query.pairs("point") {
            let coordinates = point.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
            guard coordinates.count == 2, let x = coordinates[0], let y = coordinates[1] else {
                throw .engine(.invalidParameter(name: "point", reason: "\"\(point)\" is not x,y"))
            }
            boxes.append(PixelBox(x1: x, y1: y, x2: x, y2: y))
        }
        return try Self.stamp(requestID) { () throws(VisualSearchError) in try engine.discoverSearch(image, boxes: boxes, parameters: parameters) }
    }

    /// The query image: the multipart `image`, else `im_url`, else `im_id` (the Swift SDK's precedence).
    func queryImage(_ request: RequestParameters) throws(ServerError) -> QueryImage {
        if let bytes = request.image { return .bytes(bytes) }
        if let url = request.query.string("im_url") { return try endpoint.configuration.imageSource(url, parameter: "im_url") }
        if let id = request.query.string("im_id") { return .imageID(id) }
        throw .engine(.invalidParameter(name: "image", reason: "send a multipart image part, im_url or im_id"))
    }

    // MARK: - Shared helpers

    static func parameters(_ request: RequestParameters, dialect: SearchParameters.WireDialect = .viSearch) throws(ServerError) -> SearchParameters {
        try engineCall { () throws(VisualSearchError) in try SearchParameters(wire: request.query, dialect: dialect) }
    }

    static func required(_ name: String, in request: RequestParameters) throws(ServerError) -> String {
        guard let value = request.query.string(name) else { throw .engine(.invalidParameter(name: name, reason: "required")) }
        return value
    }

    static func box(_ text: String?, name: String) throws(ServerError) -> PixelBox? {
        guard let text else { return nil }
        do {
            let box = try PixelBox(parsing: text)
            try box.validate()
            return box
        } catch {
            throw .engine(.invalidParameter(name: name, reason: error.description))
        }
    }

    static func engineCall<T>(_ body: () throws(VisualSearchError) -> T) throws(ServerError) -> T {
        do { return try body() } catch { throw .engine(error) }
    }

    /// Runs an engine call and gives the response the request's id.
    static func stamp(_ requestID: String, _ body: () throws(VisualSearchError) -> SearchResponse) throws(ServerError) -> SearchResponse {
        var response = try engineCall(body)
        response.requestID = requestID
        return response
    }
}
