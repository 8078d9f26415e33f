import Foundation
import Hummingbird
import ImageOps
import SearchEngine
import Tracking
import VisualSearch

/// Why the server refused or failed a request. Each case has its HTTP
/// status and a message for the response's `error`; as Hummingbird's
/// `HTTPResponseError` it answers itself in its API family's error JSON
/// (``Responses``), so any middleware sees its status.
public enum ServerError: Error, Sendable, CustomStringConvertible, HTTPResponseError {
    /// The request or the service's own error (bad parameter 400, unknown field 400, image not found 404, storage 500…).
    case engine(VisualSearchError)
    /// A service behind the routes failed in its own way (a proxied client's error, say).
    case service(status: Int, message: String)
    /// Missing or wrong credentials (401).
    case unauthorized(String)
    /// Good credentials whose role does not allow the request (403): an app key on the data API.
    case forbidden(String)
    /// The body stopped arriving at the minimum rate before the server could check its credentials (408; the connection is closed).
    case bodyStalled(String)
    /// The body exceeds the limit (413).
    case bodyTooLarge(limit: Int)
    /// The server sheds the request: its queue is full or it waited too long (503 with `Retry-After`).
    case busy(reason: String, retryAfter: Int)
    /// The client is over its rate or its requests in flight (429 with `Retry-After`).
    case rateLimited(reason: String, retryAfter: Int)
    /// The server has no room left to store what was sent — the collector's
    /// events at their cap (507 with `Retry-After`: when it looks again).
    case storageFull(reason: String, retryAfter: Int)
    /// The request took longer than the limit (503).
    case timedOut(seconds: Double)
    /// No such endpoint (404).
    case notFound(path: String)
    /// The client went away or sent a broken body.
    case badBody(String)

    /// The HTTP status answered, as a number.
    public var statusCode: Int {
        switch self {
        case .engine(.image(.limitExceeded)): 413
        case .engine(let error): error.httpStatus
        case .service(let status, _): status
        case .unauthorized: 401
        case .forbidden: 403
        case .bodyStalled: 408
        case .bodyTooLarge: 413
        case .busy, .timedOut: 503
        case .rateLimited: 429
        case .storageFull: 507
        case .notFound: 404
        case .badBody: 400
        }
    }

    /// The message clients see.
    public var message: String {
        switch self {
        case .engine(.image(.limitExceeded(let source, let limit))): Self.tooLarge(source, limit)
        case .engine(let error): error.message
        case .service(_, let message): message
        case .unauthorized(let reason): reason
        case .forbidden(let reason): "Forbidden: \(reason)"
        case .bodyStalled(let reason): "Request timeout: \(reason)"
        case .bodyTooLarge(let limit): "Request body too large: the limit is \(limit) bytes"
        case .busy(let reason, let retryAfter): "Server busy: \(reason); retry in \(retryAfter) s"
        case .rateLimited(let reason, let retryAfter): "Too many requests: \(reason); retry in \(retryAfter) s"
        case .storageFull(let reason, let retryAfter): "Insufficient storage: \(reason); retry in \(retryAfter) s"
        case .timedOut(let seconds): "Request timed out after \(seconds) s"
        case .notFound(let path): "No such endpoint: \(path)"
        case .badBody(let reason): "Malformed request body: \(reason)"
        }
    }

    /// An image beyond the server's limits, in the server's words (the command line's flags mean nothing to a client).
    static func tooLarge(_ source: String, _ limit: ImageOpsError.Limit) -> String {
        switch limit {
        case .pixels(let width, let height, let maximum):
            "Image too large: \(source) declares \(width)×\(height) pixels, beyond this server's limit of \(Self.megapixels(maximum)) per image; send a smaller image"
        case .side(let width, let height, let maximum):
            "Image too large: \(source) declares \(width)×\(height) pixels, beyond this server's limit of \(maximum) px a side; send a smaller image"
        case .inputBytes(let count, let maximum):
            "Image too large: \(source) is \(count) bytes, beyond this server's limit of \(maximum) bytes"
        case .animation(let width, let height, let frames, let pixelsHeld, let maximum):
            "Image too large: \(source) is an animation of \(frames) frame\(frames == 1 ? "" : "s") on a \(width)×\(height) canvas; decoding it holds "
                + "\(pixelsHeld) pixels at once, beyond this server's limit of \(Self.megapixels(maximum)) per image; send a smaller image"
        }
    }

    static func megapixels(_ pixels: Int) -> String {
        let value = Double(pixels) / 1_000_000
        return (value == value.rounded() ? String(Int(value)) : String(format: "%.1f", value)) + " megapixels"
    }

    /// Seconds a client should wait before retrying, sent as `Retry-After` (429, 503 and 507 answers).
    public var retryAfter: Int? {
        switch self {
        case .busy(_, let seconds), .rateLimited(_, let seconds), .storageFull(_, let seconds), .engine(.overloaded(_, let seconds)): seconds
        case .engine(.unavailable): 1
        default: nil
        }
    }

    public var description: String { "HTTP \(status): \(message)" }
}

extension ServerError {
    /// The HTTP status answered.
    public var status: HTTPResponse.Status { HTTPResponse.Status(code: statusCode) }

    /// The collector's store failed reading or writing events (500), in the engine's storage words.
    static func eventStore(_ error: TrackingError) -> ServerError {
        .engine(.storage(reason: error.description, sql: nil))
    }

    /// The error JSON of the request's API family (from its path), with `Retry-After` when the error says when to retry.
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        let path = request.uri.path
        return Responses.failure(self, family: RoutePath.family(of: path), method: RoutePath.method(of: path),
                                 requestID: RequestID.make())
    }
}

/// A service's failure that maps itself to the server's answer: every
/// ``VisualSearchService/Failure`` a ``ServiceRoutes`` serves conforms, so a
/// typed failure reaches HTTP without being erased and cast back.
public protocol ServedFailure: Error {
    /// The answer the server gives for this failure.
    var served: ServerError { get }
}

extension VisualSearchError: ServedFailure {
    /// The engine's failure, with the status its case carries.
    public var served: ServerError { .engine(self) }
}

extension CatalogStoreError: ServedFailure {
    /// A store's failure, in the engine's words (``VisualSearchError/init(_:)``) and with their status.
    public var served: ServerError { .engine(VisualSearchError(self)) }
}

extension ClientError: ServedFailure {
    /// A proxied service's failure: its HTTP status and message when it
    /// answered, 400 for a request the client refused to send, 502 otherwise.
    public var served: ServerError {
        switch self {
        case .http(let status, _, let message): .service(status: status, message: message ?? description)
        case .invalidRequest(let reason): .service(status: 400, message: reason)
        default: .service(status: 502, message: description)
        }
    }
}
