import Foundation
import Hummingbird
import VisualSearch

/// The frame every endpoint runs in: read and merge parameters (with the
/// body limit), authenticate, run the endpoint under the request deadline,
/// render JSON — or the API family's error JSON. `maxBodyBytes` lowers the
/// body limit for one route (the collector's batches). Endpoints only see
/// ``RequestParameters`` and return a value; they never touch HTTP.
struct EndpointFrame: Sendable {
    let configuration: ServerConfiguration

    func run<T: Encodable & Sendable, Context: VisualSearchRequestContext>(_ request: Request, context: Context, family: APIFamily, method: String,
                                      authenticated: Bool = true, maxBodyBytes: Int? = nil,
                                      _ body: @escaping @Sendable (RequestParameters) async throws(ServerError) -> T) async -> Response {
        let configuration = self.configuration
        let requestID = context.requestID
        let outcome: Result<T, ServerError> = await withDeadline(configuration.requestTimeout, {
            do throws(ServerError) {
                let parameters = try await RequestParameters.read(request, maxBodyBytes: min(maxBodyBytes ?? .max, configuration.maxBodyBytes))
                if authenticated, let problem = configuration.credentials.problem(
                    authorization: request.headers[.authorization], parameters: parameters.query) {
                    throw .unauthorized(problem)
                }
                return .success(try await body(parameters))
            } catch {
                return .failure(error)
            }
        }, onTimeout: { .failure(.timedOut(seconds: configuration.requestTimeout)) })
        switch outcome {
        case .success(let value): return Responses.json(value)
        case .failure(let error): return Responses.failure(error, family: family, method: method, requestID: requestID)
        }
    }
}
