import HTTPTypes
import Hummingbird
import NIOCore

/// The web page: `GET /` (the search page), `GET /analytics` (the analytics
/// page) and `GET /ui/{file}` (their CSS and JavaScript modules), from
/// ``WebAssets``. docs/web-page.md describes the page and the routes it calls.
///
/// HTML answers carry ``contentSecurityPolicy``: scripts, styles and
/// connections from this origin only, no inline script or style, no
/// framing. Every answer has an `ETag` from its content and
/// `Cache-Control: no-cache` (revalidated on each load: an upgraded server's
/// page is seen at once, an unchanged one costs a 304).
public struct WebPageRoutes: Sendable {
    public let assets: WebAssets

    /// The page's Content-Security-Policy.
    public static let contentSecurityPolicy = "default-src 'self'; img-src 'self' data: blob:; style-src 'self'; script-src 'self'; "
        + "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"

    public init(assets: WebAssets) {
        self.assets = assets
    }

    /// Adds `/`, `/analytics` and `/ui/{file}` to `router`.
    public func register<Context: VisualSearchRequestContext>(on router: Router<Context>) {
        router.get("/") { request, context in serve("index.html", request, context) }
        router.get("analytics") { request, context in serve("analytics.html", request, context) }
        router.get("ui/:file") { request, context in serve(context.parameters.get("file") ?? "", request, context) }
    }

    func serve<Context: VisualSearchRequestContext>(_ name: String, _ request: Request, _ context: Context) -> Response {
        guard let file = assets.file(name) else {
            return Responses.failure(.notFound(path: request.uri.path), family: .viSearch, method: "ui", requestID: context.requestID)
        }
        var headers: HTTPFields = [.contentType: file.contentType, .eTag: file.entityTag, .cacheControl: "no-cache"]
        if file.contentType.hasPrefix("text/html") {
            headers[.contentSecurityPolicy] = Self.contentSecurityPolicy
            headers[HTTPField.Name("Referrer-Policy")!] = "same-origin"
        }
        if let condition = request.headers[.ifNoneMatch], ImageRoutes.matches(condition, file.entityTag) {
            return Response(status: .notModified, headers: headers)
        }
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: file.bytes)))
    }
}
