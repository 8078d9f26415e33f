import Foundation

/// What a request whose head carries no credential may cost before its
/// credentials are known, on a server with keys: its body is read by
/// admission itself (``AdmissionMiddleware``) under a small allowance of its
/// own — never a lane slot — and only while it keeps arriving.
///
/// Such requests are the collector's batches and requests whose key is in a
/// form body (the Java and JS SDKs put ProductSearch's `app_key` there). The
/// allowance is apart from the lanes, so bodies that never arrive (from any
/// number of addresses) cannot hold the slots clients with a key in the
/// head need: at worst they fill this allowance, and requests without a
/// credential in the head then wait their turn or are refused.
///
/// ```swift
/// var limits = ServerLimits()
/// limits.unverifiedBodies.maxInFlight = 32     // many ProductSearch clients with the key in the form
/// ```
public struct UnverifiedBodyLimits: Sendable, Hashable {
    /// Bodies read at once for requests without a credential in the head,
    /// from every address together: 16 by default. One more is answered 503
    /// with `Retry-After`, its body unread.
    public var maxInFlight: Int
    /// Of those, from one address: 2 by default. One more is answered 429 with `Retry-After`.
    public var maxPerClient: Int
    /// Seconds a body may take before it must show progress: 2 by default.
    public var grace: Double
    /// Bytes a second the body must then keep arriving at: 16 KiB by default.
    /// A body is given ``grace`` plus one second for every `minRate` bytes
    /// received (and never more than the request timeout); a body behind that
    /// loses its place, is answered 408 and its connection closed.
    public var minRate: Int

    /// Limits with the documented defaults.
    public init(maxInFlight: Int = 16, maxPerClient: Int = 2, grace: Double = 2, minRate: Int = 16 << 10) {
        self.maxInFlight = maxInFlight
        self.maxPerClient = maxPerClient
        self.grace = grace
        self.minRate = minRate
    }

    /// Time a body that has sent `received` bytes may have taken so far, capped at `cap` seconds.
    func allowance(received: Int, cap: Double) -> Duration {
        let seconds = min(cap, grace + Double(received) / Double(max(1, minRate)))
        return .nanoseconds(Int64(min(seconds, 1e9) * 1e9))
    }
}
