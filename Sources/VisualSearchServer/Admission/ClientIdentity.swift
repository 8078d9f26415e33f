import Foundation
import HTTPTypes
import Hummingbird
import VisualSearch

/// Who a request is from, for ``ClientLimits`` and the body budget — decided
/// before its body is read. A request is its key only once that key is
/// verified (an app key in the query string, or Basic authorisation with
/// the right secret); until then it is its address, whatever key it claims,
/// so made-up keys share their sender's limits. Credentials a form body
/// carries are checked by the route, after admission: such a request is
/// its address here.
struct ClientIdentity: Hashable, Sendable {
    /// `key:…` or `address:…`: the client's entry in ``ClientLimiter``.
    let key: String
    /// Whether the server accepts who the request says it is: its key
    /// verified, or the server is open (no keys to check). Requests that are
    /// not share a part of the body budget (``BodyBudget``).
    let authenticated: Bool

    init(key: String, authenticated: Bool) {
        self.key = key
        self.authenticated = authenticated
    }

    init(of request: Request, remoteAddress: String?, limits: ClientLimits, credentials: ServerCredentials) {
        let verdict = credentials.verdict(authorization: request.headers[.authorization],
                                          parameters: WireQuery(parsing: request.uri.query ?? ""))
        switch verdict {
        case .verified(let key):
            self.key = "key:" + key
            authenticated = true
        case .open, .refused:
            self.key = "address:" + Self.address(of: request, remoteAddress: remoteAddress, limits: limits)
            authenticated = verdict == .open
        }
    }

    /// The peer's address, or the last address of the trusted proxy's header.
    static func address(of request: Request, remoteAddress: String?, limits: ClientLimits) -> String {
        if let name = limits.addressHeader, let field = HTTPField.Name(name), let value = request.headers[field],
           let last = value.split(separator: ",").last?.trimmingCharacters(in: .whitespaces), !last.isEmpty {
            return last
        }
        return remoteAddress ?? "unknown"
    }
}
