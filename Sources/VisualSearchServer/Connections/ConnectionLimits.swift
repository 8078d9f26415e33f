import Foundation

/// What a connection may cost: how many are open at once and how long a
/// client may take to send a request, so slow-drip clients cannot hold
/// connections or memory (the protection of Apache's `mod_reqtimeout` and
/// nginx's `client_header_timeout`/`client_body_timeout`).
public struct ConnectionLimits: Sendable, Hashable {
    /// Connections open at once: 512 by default. When they are all open, the
    /// connection idle longest (no request in progress — a keep-alive between
    /// requests, or one that has sent nothing yet), taken from the address
    /// holding the most connections, is closed to make room for a new one
    /// (nginx and HAProxy do the same under pressure), so a new client always
    /// gets a connection. With none idle, one more is answered 503
    /// (`Retry-After: 1`, `Connection: close`) as soon as its request's head arrives, and closed.
    public var maxConnections: Int
    /// Connections open at once from one address: 64 by default (0: no limit), so
    /// one client cannot take every connection. One more is answered 429 and
    /// closed. Off when ``ClientLimits/addressHeader`` says the server is behind
    /// a proxy (every connection then comes from the proxy).
    public var maxConnectionsPerClient: Int
    /// Connections open at once from one network — an IPv4 /24 or an IPv6 /64
    /// (``AddressPrefix``) — so a client with many addresses cannot take every
    /// connection either: 256 by default (0: no limit). When the network is at
    /// its limit, its longest-idle connection is closed for the newcomer; with
    /// none idle, the newcomer is answered 429 and closed. Off with
    /// ``ClientLimits/addressHeader``, like ``maxConnectionsPerClient``.
    public var maxConnectionsPerPrefix: Int
    /// Connections kept beyond all the others for `GET /health`: 4 by default.
    /// When every connection is taken and none is idle, a newcomer may still
    /// ask `/health` on one of these (any other request: 503); each is closed
    /// after its answer, and a newcomer takes the place of the one silent
    /// longest, so a monitor always reaches `/health`.
    public var healthReserve: Int
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
    /// Connections over a limit that are still answered (503 or 429 with
    /// `Retry-After`) at one time: 16 by default — in all, beyond
    /// ``maxConnections``, and from one address, beyond
    /// ``maxConnectionsPerClient``. A connection beyond those is closed the
    /// moment it is accepted, before the server gives it a pipeline
    /// (``AcceptGate``), so a burst of connections costs an accept and a
    /// close each and cannot delay other clients.
    public var politeRefusals: Int
    /// Connections the kernel queues before the server accepts them: 1024 by
    /// default (Linux caps it at `net.core.somaxconn`). A burst larger than the
    /// queue makes connections wait for the kernel's SYN retry (1 s) — other
    /// clients' too — so it is sized above the bursts the gate refuses.
    public var acceptBacklog: Int

    /// Limits with the documented defaults.
    public init(maxConnections: Int = 512, maxConnectionsPerClient: Int = 64, headerTimeout: Double = 10, bodyTimeout: Double = 20,
                minBodyRate: Int = 16 << 10, politeRefusals: Int = 16, acceptBacklog: Int = 1024, maxConnectionsPerPrefix: Int = 256,
                healthReserve: Int = 4) {
        self.maxConnections = maxConnections
        self.maxConnectionsPerClient = maxConnectionsPerClient
        self.maxConnectionsPerPrefix = maxConnectionsPerPrefix
        self.healthReserve = healthReserve
        self.headerTimeout = headerTimeout
        self.bodyTimeout = bodyTimeout
        self.minBodyRate = minBodyRate
        self.politeRefusals = politeRefusals
        self.acceptBacklog = acceptBacklog
    }
}
