import Hummingbird

/// The headers every answer carries, whoever made it (a route, a refusal of
/// admission, the 404 of an unknown path), so it is the outermost middleware:
///
/// - `X-Content-Type-Options: nosniff`, so a browser never runs or renders a
///   body as anything but its declared type (an uploaded "image" that is
///   really HTML, a JSON error holding markup);
/// - `Cache-Control: no-store` on JSON answers that set no caching of their
///   own: search results, metadata and errors are for the client that asked,
///   never for a shared cache. (Images and the page's files say their own.)
public struct ResponseHeadersMiddleware<Context: VisualSearchRequestContext>: RouterMiddleware {
    public init() {}

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        response.headers[.xContentTypeOptions] = "nosniff"
        if response.headers[.cacheControl] == nil, response.headers[.contentType]?.lowercased().hasPrefix("application/json") == true {
            response.headers[.cacheControl] = "no-store"
        }
        return response
    }
}
