import Foundation

/// Capped exponential backoff with full jitter: the wait before retry `n`
/// is uniform in `0...min(cap, base·2^(n−1))`; a server's `Retry-After`
/// replaces it (capped too).
///
/// ```swift
/// let backoff = Backoff()                     // 0.5 s base, 60 s cap
/// backoff.delay(failures: 3, retryAfter: nil) // somewhere in 0...2 s
/// ```
public struct Backoff: Sendable, Hashable {
    /// The first ceiling: 0.5 s by default.
    public var base: Double
    /// The largest wait: 60 s by default.
    public var cap: Double
    /// How much of the ceiling is randomised: 1 (full jitter) by default; 0 waits exactly the ceiling.
    public var jitter: Double

    public init(base: Double = 0.5, cap: Double = 60, jitter: Double = 1) {
        self.base = max(0, base)
        self.cap = max(0, cap)
        self.jitter = min(1, max(0, jitter))
    }

    /// The wait after `failures` consecutive failures (1 for the first).
    public func delay(failures: Int, retryAfter: Double?, random: (ClosedRange<Double>) -> Double = { Double.random(in: $0) }) -> Double {
        if let retryAfter { return min(cap, max(0, retryAfter)) }
        let ceiling = min(cap, base * pow(2, Double(max(0, min(failures, 60) - 1))))
        guard ceiling > 0 else { return 0 }
        return ceiling - (jitter > 0 ? random(0...ceiling * jitter) : 0)
    }
}
