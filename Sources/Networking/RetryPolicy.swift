import Foundation

/// When and how long to wait before trying again: capped exponential backoff
/// with jitter, honouring a server's `Retry-After`.
///
/// After the `n`-th failure the ceiling is `min(maxDelay, baseDelay · 2^(n−1))`;
/// the wait is uniform in `ceiling·(1−jitter) … ceiling` (full jitter by
/// default, exactly the ceiling with `jitter` 0). A `Retry-After` replaces
/// the backoff.
///
/// ```swift
/// var policy = RetryPolicy.default                 // 3 attempts, 0.5 s base, 8 s cap
/// policy.delay(afterAttempt: 2, retryAfter: nil)   // somewhere in 0...1 s
/// policy.delay(afterAttempt: 3, retryAfter: nil)   // nil: the third attempt was the last
/// RetryPolicy.delivery.delay(afterAttempt: 40, retryAfter: 600)   // 60: capped, never given up
/// ```
public struct RetryPolicy: Sendable, Hashable {
    /// Attempts in all, the first included; `Int.max` retries without end. At least 1.
    public var maxAttempts: Int
    /// The first backoff ceiling, in seconds.
    public var baseDelay: Double
    /// The largest backoff ceiling, in seconds.
    public var maxDelay: Double
    /// The longest `Retry-After` honoured, in seconds. With a finite
    /// ``maxAttempts`` a longer one ends the retries (the caller is told at
    /// once rather than kept waiting); with unbounded attempts it is capped to this.
    public var maxRetryAfter: Double
    /// How much of the ceiling is randomised, 0...1: 1 (full jitter) draws the
    /// wait uniformly in `0...ceiling`; 0 waits exactly the ceiling. 1 by default.
    public var jitter: Double

    /// A policy; negative values become 0, `maxAttempts` at least 1 and `jitter` is clamped to 0...1.
    /// - Parameters:
    ///   - maxAttempts: attempts in all, `Int.max` for unbounded.
    ///   - baseDelay: the first ceiling, in seconds.
    ///   - maxDelay: the largest ceiling, in seconds.
    ///   - maxRetryAfter: the longest `Retry-After` honoured, in seconds.
    ///   - jitter: 1 (full jitter) by default.
    public init(maxAttempts: Int, baseDelay: Double, maxDelay: Double, maxRetryAfter: Double, jitter: Double = 1) {
        self.maxAttempts = max(1, maxAttempts)
        self.baseDelay = max(0, baseDelay)
        self.maxDelay = max(0, maxDelay)
        self.maxRetryAfter = max(0, maxRetryAfter)
        self.jitter = min(1, max(0, jitter.isNaN ? 1 : jitter))
    }

    /// 3 attempts, 0.5 s base, 8 s cap, `Retry-After` honoured up to 30 s, full jitter: for API calls.
    public static let `default` = RetryPolicy(maxAttempts: 3, baseDelay: 0.5, maxDelay: 8, maxRetryAfter: 30)
    /// One attempt only: for callers that retry on their own schedule.
    public static let none = RetryPolicy(maxAttempts: 1, baseDelay: 0, maxDelay: 0, maxRetryAfter: 0)
    /// Unbounded attempts, 0.5 s base, 60 s cap, `Retry-After` capped at 60 s, full jitter:
    /// for background delivery that must never give up.
    public static let delivery = RetryPolicy(maxAttempts: .max, baseDelay: 0.5, maxDelay: 60, maxRetryAfter: 60)

    /// Whether attempts are unbounded.
    var isUnbounded: Bool { maxAttempts == .max }

    /// The wait after the `attempt`-th failure (1-based), or nil to stop.
    ///
    /// Nil when `attempt` was the last of ``maxAttempts``, or when the server
    /// asked for a `Retry-After` longer than ``maxRetryAfter`` and attempts are
    /// finite; with unbounded attempts a long `Retry-After` is capped instead.
    /// - Parameters:
    ///   - attempt: how many attempts have failed, from 1.
    ///   - retryAfter: the server's `Retry-After` in seconds, if it sent one (see ``retryAfter(_:now:)``).
    ///   - random: draws from a range; injectable so tests are exact.
    /// - Returns: seconds to wait before the next attempt, or nil.
    public func delay(afterAttempt attempt: Int, retryAfter: Double?,
                      random: (ClosedRange<Double>) -> Double = { Double.random(in: $0) }) -> Double? {
        guard isUnbounded || attempt < maxAttempts else { return nil }
        if let retryAfter, retryAfter.isFinite {
            let asked = max(0, retryAfter)
            if asked <= maxRetryAfter { return asked }
            return isUnbounded ? maxRetryAfter : nil
        }
        let exponent = Double(min(max(attempt, 1), 64) - 1)
        let ceiling = min(maxDelay, baseDelay * pow(2, exponent))
        guard ceiling > 0 else { return 0 }
        guard jitter > 0 else { return ceiling }
        let floor = ceiling * (1 - jitter)
        return min(ceiling, max(floor, random(floor...ceiling)))
    }

    /// Whether an answer with this status is worth trying again: 408, 429 and 5xx.
    public static func isRetryable(status: Int) -> Bool {
        status == 408 || status == 429 || (500...599).contains(status)
    }

    /// Parses a `Retry-After` header: delta-seconds, or an HTTP-date
    /// (IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT`, also the obsolete RFC 850
    /// `Sunday, 06-Nov-94 08:49:37 GMT` and asctime `Sun Nov  6 08:49:37 1994` forms).
    /// - Parameters:
    ///   - header: the field's value, if any.
    ///   - now: the time a date is measured from; the current time by default.
    /// - Returns: seconds to wait, at least 0 (a date in the past is 0), or nil when absent or unreadable.
    public static func retryAfter(_ header: String?, now: Date = Date()) -> Double? {
        guard let text = header?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
        if text.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }) {
            guard let seconds = Double(text), seconds.isFinite else { return nil }
            return seconds
        }
        guard let date = HTTPDate.parse(text, now: now) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }
}
