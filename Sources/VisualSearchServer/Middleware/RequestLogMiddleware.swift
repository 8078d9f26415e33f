import Foundation
import Hummingbird
import Logging
import VisualSearch

/// Logs one line per request — request id, method, path (never the query
/// string: it may hold `access_key`), status and duration — and turns any
/// error that escaped a route (an unknown path, a router error) into the
/// API's JSON error shape with `X-Log-ID`.
public struct RequestLogMiddleware<Context: VisualSearchRequestContext>: RouterMiddleware {
    let logger: Logger

    /// Logs through `logger`.
    public init(logger: Logger) {
        self.logger = logger
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        var response: Response
        do {
            response = try await next(request, context)
        } catch {
            let path = request.uri.path
            let failure: ServerError = (error as? HTTPError)?.status == .notFound ? .notFound(path: path)
                : (error as? ServerError) ?? .badBody("\(error)")
            response = Responses.failure(failure, family: RoutePath.family(of: path), method: RoutePath.method(of: path), requestID: context.requestID)
        }
        response.headers[.init("X-Log-ID")!] = context.requestID
        let elapsed = start.duration(to: .now)
        let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        logger.info("request", metadata: [
            "request_id": .string(context.requestID), "method": .string(request.method.rawValue),
            "path": .string(request.uri.path), "status": .stringConvertible(response.status.code),
            "duration_ms": .stringConvertible((milliseconds * 100).rounded() / 100),
        ])
        return response
    }
}
