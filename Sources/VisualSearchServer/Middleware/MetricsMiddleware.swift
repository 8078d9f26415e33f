import Foundation
import Hummingbird
import VisualSearch

/// Counts every answer by endpoint and status and times it, refused ones
/// included (it runs before admission).
public struct MetricsMiddleware<Context: VisualSearchRequestContext>: RouterMiddleware {
    let metrics: ServerMetrics

    init(metrics: ServerMetrics) {
        self.metrics = metrics
    }

    /// Fixed paths that may label a request refused before its route matched.
    static var knownPaths: Set<String> {
        let endpoints: [WireEndpoint] = [SearchRequest.endpoint, RecommendationsRequest.endpoint, UploadSearchRequest.endpoint,
                                         ColorSearchRequest.endpoint, DiscoverSearchRequest.endpoint, ProductSearchRequest.endpoint,
                                         InsertRequest.endpoint, RemoveRequest.endpoint]
        return Set(endpoints.flatMap(\.paths).map { "/" + $0 }).union(["/health", "/metrics", "/catalog", "/v3/events", "/v3/__va.gif", "/v3/stats"])
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        let response = try await next(request, context)
        metrics.recordRequest(endpoint: Self.endpoint(matched: context.endpointPath, path: request.uri.path),
                              status: Int(response.status.code), duration: start.duration(to: .now))
        return response
    }

    /// The route's pattern when one matched (`/images/{name}`), else the path when it is a fixed endpoint, else `unmatched`.
    static func endpoint(matched: String?, path: String) -> String {
        if let matched {
            let pattern = matched.split(separator: "/").map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0) }.joined(separator: "/")
            return "/" + pattern
        }
        if path.hasPrefix("/images/") { return "/images/{name}" }
        if path.hasPrefix("/ui/") { return "/ui/{file}" }
        return knownPaths.contains(path) ? path : "unmatched"
    }
}
