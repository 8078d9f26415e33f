import Foundation

/// Which destinations a transport may connect to: the guard against
/// server-side request forgery when a URL comes from someone else (an image
/// URL in a request to `vsearch serve`, a redirect chosen by a remote server).
///
/// A URL passes when its scheme is `http` or `https` and, for a policy that
/// refuses non-public addresses, its host is one of ``allowedHosts`` or every
/// address it resolves to is public. IP literals are checked as written;
/// names are resolved with `getaddrinfo` on a thread of their own (never on
/// Swift's cooperative pool). ``URLSessionTransport`` checks the first URL
/// before connecting and every redirect target before following it.
///
/// **Limitation (DNS rebinding):** the check resolves the name, then
/// URLSession resolves it again to connect. A name whose DNS answers change
/// between the two lookups (a short TTL under an attacker's control) can
/// still reach a non-public address. Closing that needs connecting to the
/// checked address itself, which URLSession does not offer; where it matters,
/// also block non-public egress at the network layer.
///
/// ```swift
/// let transport = URLSessionTransport(maxResponseBytes: 16 << 20, destinationPolicy: .publicOnly)
/// var policy = DestinationPolicy.publicOnly
/// policy.allowedHosts = ["images.internal:8080"]   // an explicit exception
/// ```
public struct DestinationPolicy: Sendable, Hashable {
    /// Whether loopback, link-local, private, shared (CGNAT), multicast,
    /// unspecified, broadcast and reserved addresses are refused, in IPv4,
    /// IPv6 and IPv4-mapped (and -compatible, NAT64, 6to4) forms.
    public var refusesNonPublicAddresses: Bool
    /// Explicit exceptions, allowed whatever they resolve to: `"host"` (any
    /// port) or `"host:port"`, lower-cased; an IPv6 host as `"::1"` or `"[::1]:8080"`. None by default.
    public var allowedHosts: Set<String>

    /// A policy.
    /// - Parameters:
    ///   - refusesNonPublicAddresses: whether non-public addresses are refused.
    ///   - allowedHosts: exceptions, `"host"` or `"host:port"`; none by default.
    public init(refusesNonPublicAddresses: Bool, allowedHosts: Set<String> = []) {
        self.refusesNonPublicAddresses = refusesNonPublicAddresses
        self.allowedHosts = Set(allowedHosts.map { $0.lowercased() })
    }

    /// Any `http` or `https` destination: for the command line, where the URL is the user's own.
    public static let unrestricted = DestinationPolicy(refusesNonPublicAddresses: false)
    /// Public addresses only: for URLs that come from other people (a server fetching a client's image URL).
    public static let publicOnly = DestinationPolicy(refusesNonPublicAddresses: true)

    /// Checks that `url` may be connected to.
    ///
    /// The scheme must be `http` or `https`; with ``refusesNonPublicAddresses``
    /// the host must be allowed explicitly, or be a public IP literal, or
    /// resolve only to public addresses. Nothing is connected to.
    /// - Throws: ``HTTPClientError/destinationRefused(url:reason:)``;
    ///   ``HTTPClientError/transport(url:reason:)`` when the name does not resolve;
    ///   ``HTTPClientError/cancelled`` when the calling task is cancelled.
    public func check(_ url: URL) async throws(HTTPClientError) {
        try await check(url, timeout: nil)
    }

    /// ``check(_:)`` with the resolution bounded by `timeout` seconds (``HTTPClientError/timeout(url:seconds:)``).
    func check(_ url: URL, timeout: Double?) async throws(HTTPClientError) {
        let host = try checkScheme(url)
        guard refusesNonPublicAddresses, !isAllowedExplicitly(url, host: host) else { return }
        let shown = Redaction.url(url)
        if let literal = IPAddress(literal: host) {
            if let kind = literal.nonPublicKind {
                throw .destinationRefused(url: shown, reason: "\(literal) is \(IPAddress.article(kind)) \(kind) address")
            }
            return
        }
        let addresses: [IPAddress]
        do { addresses = try await HostResolver.resolve(host, timeout: timeout) } catch {
            switch error {
            case .unresolvable(let reason): throw .transport(url: shown, reason: "cannot resolve \(host): \(reason)")
            case .timedOut: throw .timeout(url: shown, seconds: timeout ?? 0)
            case .cancelled: throw .cancelled
            }
        }
        guard !addresses.isEmpty else { throw .transport(url: shown, reason: "cannot resolve \(host): no address") }
        for address in addresses {
            if let kind = address.nonPublicKind {
                throw .destinationRefused(url: shown, reason: "\(host) resolves to \(address), \(IPAddress.article(kind)) \(kind) address")
            }
        }
    }

    /// The URL's host (brackets removed) once the scheme is known to be http(s).
    func checkScheme(_ url: URL) throws(HTTPClientError) -> String {
        let scheme = url.scheme?.lowercased() ?? ""
        guard scheme == "http" || scheme == "https" else {
            throw .destinationRefused(url: Redaction.url(url), reason: scheme.isEmpty ? "no scheme" : "\(scheme): is not http or https")
        }
        var host = url.host ?? ""
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { throw .destinationRefused(url: Redaction.url(url), reason: "no host") }
        return host
    }

    /// Whether `host` or `host:port` (default port by scheme) is in ``allowedHosts``.
    func isAllowedExplicitly(_ url: URL, host: String) -> Bool {
        guard !allowedHosts.isEmpty else { return false }
        var name = host.lowercased()
        if name.hasSuffix(".") { name.removeLast() }
        let port = url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
        let bracketed = name.contains(":") ? "[\(name)]" : name
        let allowed = Set(allowedHosts.map { $0.lowercased() })
        return allowed.contains(name) || allowed.contains(bracketed) || allowed.contains("\(bracketed):\(port)")
    }
}
