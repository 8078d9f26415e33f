import Foundation
import VisualSearch

/// The keys a server accepts (docs/wire-protocol.md §1.3, §4.2):
///
/// - an **app key** is accepted as `access_key=` (ViSearch mobile SDKs) or
///   `app_key=` (ProductSearch);
/// - an **access key with its secret** is accepted as HTTP Basic
///   authorisation (ViSearch server SDKs).
///
/// App keys search and track; the data API (`/insert`, `/remove`, insert
/// status) needs an access key with its secret (``Role``).
///
/// With no keys at all the server is open, and says so when it starts.
///
/// ```swift
/// let credentials = try ServerCredentials(lines: """
///     # app keys, one per line
///     dev-app-key
///     # access keys with their secrets
///     ACCESS:SECRET
///     """)
/// ```
public struct ServerCredentials: Sendable, Hashable {
    public var appKeys: Set<String>
    /// access key → secret.
    public var accessKeys: [String: String]

    public init(appKeys: Set<String> = [], accessKeys: [String: String] = [:]) {
        self.appKeys = appKeys
        self.accessKeys = accessKeys
    }

    /// Parses a keys file: one key per line, `KEY` for an app key or
    /// `KEY:SECRET` for an access key; blank lines and `#` comments ignored.
    /// - Throws: ``VisualSearchError/invalidParameter(name:reason:)`` naming the line.
    public init(lines text: String) throws(VisualSearchError) {
        self.init()
        for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty || line.hasPrefix("#") { continue }
            try add(line, where: "line \(number + 1)")
        }
    }

    /// Adds `KEY` (an app key) or `KEY:SECRET` (an access key).
    public mutating func add(_ entry: String, where place: String = "key") throws(VisualSearchError) {
        let parts = entry.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        guard let key = parts.first, !key.isEmpty, !key.contains(where: \.isWhitespace) else {
            throw .invalidParameter(name: place, reason: "a key must be non-empty and without spaces")
        }
        if parts.count == 2 {
            guard !parts[1].isEmpty else { throw .invalidParameter(name: place, reason: "access key \(key) has an empty secret") }
            accessKeys[key] = parts[1]
        } else {
            appKeys.insert(key)
        }
    }

    /// No keys: every request is accepted.
    public var isOpen: Bool { appKeys.isEmpty && accessKeys.isEmpty }

    /// What a verified key may do (README, "Running it in production"):
    /// an app key searches and tracks — it ships inside apps, so anyone may
    /// hold it; an access key with its secret (HTTP Basic, from a shop's own
    /// backend) may also change the catalog through the data API.
    public enum Role: Sendable, Hashable {
        /// An app key (`access_key=`/`app_key=`): search and tracking.
        case app
        /// An access key with its secret (HTTP Basic): everything, the data API included.
        case access
    }

    /// What a request's credentials are worth.
    enum Verdict: Equatable {
        /// The server has no keys: nothing to check.
        case open
        /// Good credentials for this app key or access key.
        case verified(key: String, role: Role)
        /// No credentials at all (they may still come in a form body).
        case missing
        /// Wrong credentials, and why.
        case refused(String)
    }

    /// Checks the credentials of a request: its HTTP Basic `authorization`
    /// first, else `access_key`/`app_key` among `parameters`. Admission asks
    /// it with the query string alone, before the body is read (and with
    /// the form's fields once it has read the body of a request whose head
    /// carried none); the routes with every parameter.
    func verdict(authorization: String?, parameters: WireQuery) -> Verdict {
        if isOpen { return .open }
        if let authorization {
            guard let (key, secret) = Self.basicCredentials(authorization) else {
                return .refused("Invalid Authorization header: expected Basic base64(access_key:secret_key)")
            }
            let good = accessKeys[key].map { ServerCredentials.constantTimeEqual($0, secret) } == true
            return good ? .verified(key: key, role: .access) : .refused("Invalid access key or secret key")
        }
        for name in ["access_key", "app_key"] {
            if let key = parameters.string(name) {
                let good = appKeys.contains(where: { ServerCredentials.constantTimeEqual($0, key) })
                return good ? .verified(key: key, role: .app) : .refused("Invalid \(name == "app_key" ? "app key" : "access key")")
            }
        }
        return .missing
    }

    static let missingMessage = "Missing credentials: send access_key (app key), app_key, or Basic authorization"
    /// Why an app key is refused by the data API (403).
    static let dataAPIMessage = "the data API needs an access key and its secret (HTTP Basic); app keys search and track"

    /// What went wrong with a request's credentials, or nil when they are good.
    func problem(authorization: String?, parameters: WireQuery) -> String? {
        switch verdict(authorization: authorization, parameters: parameters) {
        case .refused(let reason): reason
        case .missing: Self.missingMessage
        case .open, .verified: nil
        }
    }

    /// Why a request may not do what needs `role`, or nil when it may:
    /// missing or wrong credentials (401), or an app key where an access key
    /// with its secret is needed (403, naming the role).
    func refusal(authorization: String?, parameters: WireQuery, needs role: Role) -> ServerError? {
        switch verdict(authorization: authorization, parameters: parameters) {
        case .refused(let reason): .unauthorized(reason)
        case .missing: .unauthorized(Self.missingMessage)
        case .verified(_, .app) where role == .access: .forbidden(Self.dataAPIMessage)
        case .open, .verified: nil
        }
    }

    /// The key and secret of an HTTP Basic `Authorization` value, or nil when it is not one.
    static func basicCredentials(_ authorization: String) -> (key: String, secret: String)? {
        guard authorization.lowercased().hasPrefix("basic "),
              let decoded = Data(base64Encoded: String(authorization.dropFirst(6)).trimmingCharacters(in: .whitespaces)),
              let pair = String(data: decoded, encoding: .utf8), let colon = pair.firstIndex(of: ":") else { return nil }
        return (String(pair[..<colon]), String(pair[pair.index(after: colon)...]))
    }

    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        var difference = UInt8(x.count == y.count ? 0 : 1)
        for i in 0..<min(x.count, y.count) { difference |= x[i] ^ y[i] }
        return difference == 0
    }
}
