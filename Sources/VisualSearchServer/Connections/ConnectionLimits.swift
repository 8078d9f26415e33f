import Foundation

/// What a connection may cost: how many are open at once and how long a
/// client may take to send a request, so slow-drip clients cannot hold
/// connections or memory (the protection of Apache's `mod_reqtimeout` and
/// nginx's `client_header_timeout`/`client_body_timeout`).
public struct ConnectionLimits: Sendable, Hashable {
    /// Connections open at once: 512 by default. One more is answered 503
    /// (`Retry-After: 1`, `Connection: close`) as soon as its request's head arrives, and closed.
    public var maxConnections: Int
    /// Connections open at once from one address: 64 by default (0: no limit), so
    /// one client cannot take every connection. One more is answered 429 and
    /// closed. Off when ``ClientLimits/addressHeader`` says the server is behind
    /// a proxy (every connection then comes from the proxy).
    public var maxConnectionsPerClient: Int
    /// Seconds a client has to send a request's headers, counted from when the
    /// connection opens or its previous response was sent — so it also bounds
    /// how long an idle keep-alive connection is kept: 10 by default.
    public var headerTimeout: Double
    /// Seconds a client has to send a request's body, counted from its headers,
    /// plus one second for every ``minBodyRate`` bytes received: 20 by default.
    public var bodyTimeout: Double
    /// Bytes a second a body must keep arriving at to earn more time: 16 KiB by
    /// default. A body dripping one byte a second is cut after about ``bodyTimeout``;
    /// a 16 MiB upload at 1 MB/s is never cut.
    public var minBodyRate: Int

    /// Limits with the documented defaults.
    public init(maxConnections: Int = 512, maxConnectionsPerClient: Int = 64, headerTimeout: Double = 10, bodyTimeout: Double = 20,
                minBodyRate: Int = 16 << 10) {
        self.maxConnections = maxConnections
        self.maxConnectionsPerClient = maxConnectionsPerClient
        self.headerTimeout = headerTimeout
        self.bodyTimeout = bodyTimeout
        self.minBodyRate = minBodyRate
    }
}
