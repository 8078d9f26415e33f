import Hummingbird

/// Adds `X-Content-Type-Options: nosniff` to every answer, so a browser
/// never runs or renders a body as anything but its declared type (an
/// uploaded "image" that is really HTML, a JSON error holding markup).
public struct ContentTypeOptionsMiddleware<Context: VisualSearchRequestContext>: RouterMiddleware {
    public init() {}

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        response.headers[.xContentTypeOptions] = "nosniff"
        return response
    }
}
