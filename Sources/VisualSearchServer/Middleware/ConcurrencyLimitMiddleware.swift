import Hummingbird
import Synchronization

/// Refuses requests beyond a number in flight with 503 and `Retry-After: 1`
/// (which every retrying client honours), so a burst cannot pile unbounded
/// work onto the engine.
struct ConcurrencyLimitMiddleware: RouterMiddleware {
    typealias Context = ServerContext
    let limit: Int
    let inFlight = Counter()

    final class Counter: Sendable {
        let value = Atomic<Int>(0)
    }

    func handle(_ request: Request, context: ServerContext, next: (Request, ServerContext) async throws -> Response) async throws -> Response {
        let current = inFlight.value.wrappingAdd(1, ordering: .relaxed).newValue
        defer { inFlight.value.wrappingSubtract(1, ordering: .relaxed) }
        guard current <= limit else {
            let path = request.uri.path
            var response = Responses.failure(.busy(limit: limit), family: Routes.family(of: path), method: Routes.method(of: path),
                                             requestID: context.requestID)
            response.headers[.retryAfter] = "1"
            return response
        }
        return try await next(request, context)
    }
}
