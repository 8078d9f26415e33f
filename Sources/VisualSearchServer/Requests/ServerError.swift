import Foundation
import VisualSearch

/// Why the server refused or failed a request. Each case has its HTTP
/// status and a message for the response's `error`.
public enum ServerError: Error, Sendable, CustomStringConvertible {
    /// The engine's own error (bad parameter 400, unknown field 400, image not found 404, storage 500…).
    case engine(VisualSearchError)
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

    /// The HTTP status answered.
    public var status: Int {
        switch self {
        case .engine(let error): error.httpStatus
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
