import Foundation
import HTTPTypes
import Hummingbird
import VisualSearch

/// Who a request is from, for ``ClientLimits`` and the body budget. A
/// request is its key only once that key is verified — an access key by
/// Basic authorisation with the right secret, an app key as
/// `access_key`/`app_key` in the query string (or, for a request whose head
/// carries no credential, in its form body, once admission has read it);
/// until then it is its address. Wrong credentials never reach a lane:
/// admission answers them 401 (``AdmissionMiddleware``).
///
/// An access key is one client wherever it comes from (its secret stays on
/// its owner's servers). An app key ships inside apps, so anyone may hold it:
/// its requests are a client per key *and* address (`key:K@address`), and
/// one leaked app key cannot spend its owner's limits.
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

    /// The client a request with these credentials is, sent from `address`.
    init(verdict: ServerCredentials.Verdict, address: String) {
        switch verdict {
        case .verified(let key, .access):
            self.key = "key:" + key
            authenticated = true
        case .verified(let key, .app):
            self.key = "key:\(key)@\(address)"
            authenticated = true
        case .open, .missing, .refused:
            self.key = "address:" + address
            authenticated = verdict == .open
        }
    }

    /// The client a request is by its head alone (Basic or the query string).
    init(of request: Request, remoteAddress: String?, limits: ClientLimits, credentials: ServerCredentials) {
        self.init(verdict: credentials.verdict(authorization: request.headers[.authorization], parameters: WireQuery(parsing: request.uri.query ?? "")),
                  address: Self.address(of: request, remoteAddress: remoteAddress, limits: limits))
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
