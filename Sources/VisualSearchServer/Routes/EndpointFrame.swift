import Foundation
import Hummingbird
import VisualSearch

/// The frame every endpoint runs in: read and merge parameters (with the
/// body limit), authenticate, run the endpoint under the request deadline,
/// render JSON — or the API family's error JSON. `maxBodyBytes` lowers the
/// body limit for one route (the collector's batches); `needs` is the role
/// its key must have (``ServerCredentials/Role``: the data API's is `.access`). Endpoints only see
/// ``RequestParameters`` and return a value; they never touch HTTP.
struct EndpointFrame: Sendable {
    let settings: EndpointSettings

    func run<T: Encodable & Sendable, Context: VisualSearchRequestContext>(_ request: Request, context: Context, family: APIFamily, method: String,
                                      authenticated: Bool = true, needs role: ServerCredentials.Role = .app, maxBodyBytes: Int? = nil,
                                      _ body: @escaping @Sendable (RequestParameters) async throws(ServerError) -> T) async -> Response {
        let settings = self.settings
        let requestID = context.requestID
        let outcome: Result<T, ServerError> = await withDeadline(settings.requestTimeout, {
            do throws(ServerError) {
                let parameters = try await RequestParameters.read(request, maxBodyBytes: min(maxBodyBytes ?? .max, settings.maxBodyBytes))
                if authenticated, let refusal = settings.credentials.refusal(
                    authorization: request.headers[.authorization], parameters: parameters.query, needs: role) {
                    throw refusal
                }
                return .success(try await body(parameters))
            } catch {
                return .failure(error)
            }
        }, onTimeout: { .failure(.timedOut(seconds: settings.requestTimeout)) })
        switch outcome {
        case .success(let value): return Responses.json(value)
        case .failure(let error):
            return Responses.failure(error, family: family, method: method, requestID: requestID, settingNames: settings.settingNames)
        }
    }
}
