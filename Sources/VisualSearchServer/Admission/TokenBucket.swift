import Foundation
import ConcurrencyToolkit

/// A token bucket: up to ``capacity`` tokens, refilled at ``rate`` a second
/// by the ``ElapsedClock``'s time (``refill(now:)``). A request costing `n`
/// tokens goes on when the bucket holds `n` (``take(_:)``), and otherwise is
/// told how long to wait (``secondsUntil(_:)``). Tokens are whatever the
/// limit counts: events, bytes.
///
/// ```swift
/// var bucket = TokenBucket(capacity: 500, rate: 50, now: clock.now)
/// bucket.refill(now: clock.now)
/// if bucket.holds(380) { bucket.take(380) } else { retryAfter = bucket.secondsUntil(380) }
/// ```
struct TokenBucket: Sendable, Hashable {
    /// The most tokens it holds (the burst).
    let capacity: Double
    /// Tokens added a second.
    let rate: Double
    /// Tokens in it now (as of ``refilled``); below zero only if taken on credit.
    private(set) var tokens: Double
    /// When it was last refilled (``ElapsedClock/now``).
    private(set) var refilled: Duration

    /// A full bucket.
    init(capacity: Double, rate: Double, now: Duration) {
        self.capacity = capacity
        self.rate = rate
        tokens = capacity
        refilled = now
    }

    /// Adds the tokens earned since the last refill, up to ``capacity``.
    mutating func refill(now: Duration) {
        let elapsed = now - refilled
        guard elapsed > .zero else { return }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        tokens = min(capacity, tokens + seconds * rate)
        refilled = now
    }

    /// Whether `amount` tokens are there to take.
    func holds(_ amount: Double) -> Bool { tokens >= amount }

    /// Takes `amount` tokens.
    mutating func take(_ amount: Double) { tokens -= amount }

    /// Whole seconds (at least 1) until the bucket holds `amount`; nil when it never can (more than ``capacity``, or no refill).
    func secondsUntil(_ amount: Double) -> Int? {
        guard amount <= capacity, rate > 0 else { return nil }
        return max(1, Int(((amount - tokens) / rate).rounded(.up)))
    }

    /// Whether it is full: a client whose buckets are all full can be forgotten.
    var isFull: Bool { tokens >= capacity }
}
