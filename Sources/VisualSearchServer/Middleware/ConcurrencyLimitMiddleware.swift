import Hummingbird
import Synchronization

/// Refuses requests beyond a number in flight with 503 and `Retry-After: 1`
/// (which every retrying client honours), so a burst cannot pile unbounded
/// work onto the engine.
public struct ConcurrencyLimitMiddleware<Context: VisualSearchRequestContext>: RouterMiddleware {
    let limit: Int
    let inFlight = Counter()

    /// Refuses requests beyond `limit` in flight.
    public init(limit: Int) {
        self.limit = limit
    }

    final class Counter: Sendable {
        let value = Atomic<Int>(0)
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let current = inFlight.value.wrappingAdd(1, ordering: .relaxed).newValue
        defer { inFlight.value.wrappingSubtract(1, ordering: .relaxed) }
        guard current <= limit else {
            let path = request.uri.path
            var response = Responses.failure(.busy(limit: limit), family: RoutePath.family(of: path), method: RoutePath.method(of: path),
                                             requestID: context.requestID)
            response.headers[.retryAfter] = "1"
            return response
        }
        return try await next(request, context)
    }
}
