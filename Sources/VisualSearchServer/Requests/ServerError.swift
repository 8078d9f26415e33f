import Foundation
import VisualSearch

/// Why the server refused or failed a request. Each case has its HTTP
/// status and a message for the response's `error`.
public enum ServerError: Error, Sendable, CustomStringConvertible {
    /// The request or the service's own error (bad parameter 400, unknown field 400, image not found 404, storage 500…).
    case engine(VisualSearchError)
    /// A service behind the routes failed in its own way (a proxied client's error, say).
    case service(status: Int, message: String)
    /// Missing or wrong credentials (401).
    case unauthorized(String)
    /// The body exceeds the limit (413).
    case bodyTooLarge(limit: Int)
    /// Too many requests in flight (503, Retry-After: 1).
    case busy(limit: Int)
    /// The request took longer than the limit (503).
    case timedOut(seconds: Double)
    /// No such endpoint (404).
    case notFound(path: String)
    /// The client went away or sent a broken body.
    case badBody(String)

    /// A service's failure as the server answers it.
    public init(serviceFailure error: any Error) {
        switch error {
        case let error as VisualSearchError: self = .engine(error)
        case let error as ClientError:
            switch error {
            case .http(let status, _, let message): self = .service(status: status, message: message ?? error.description)
            case .invalidRequest(let reason): self = .service(status: 400, message: reason)
            default: self = .service(status: 502, message: error.description)
            }
        case let error as ServerError: self = error
        default: self = .service(status: 500, message: "\(error)")
        }
    }

    /// The HTTP status answered.
    public var status: Int {
        switch self {
        case .engine(let error): error.httpStatus
        case .service(let status, _): status
        case .unauthorized: 401
        case .bodyTooLarge: 413
        case .busy, .timedOut: 503
        case .notFound: 404
        case .badBody: 400
        }
    }

    /// The message clients see.
    public var message: String {
        switch self {
        case .engine(let error): error.message
        case .service(_, let message): message
        case .unauthorized(let reason): reason
        case .bodyTooLarge(let limit): "Request body too large: the limit is \(limit) bytes"
        case .busy(let limit): "Server busy: more than \(limit) requests in flight; retry shortly"
        case .timedOut(let seconds): "Request timed out after \(seconds) s"
        case .notFound(let path): "No such endpoint: \(path)"
        case .badBody(let reason): "Malformed request body: \(reason)"
        }
    }

    public var description: String { "HTTP \(status): \(message)" }
}
