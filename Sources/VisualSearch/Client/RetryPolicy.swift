import Foundation

/// When and how long to wait before trying a request again: capped
/// exponential backoff with full jitter, honouring `Retry-After`.
///
/// Only transient failures are retried (``ClientError/isTransient``):
/// connection failures, timeouts, 408, 429 and 5xx. A 4xx other than 408
/// and 429 is final. Requests that are not idempotent (the data API's
/// insert) are retried only when the connection was refused, i.e. when the
/// server certainly never saw them.
///
/// ```swift
/// var policy = RetryPolicy.default      // 3 attempts, 0.5 s base, 8 s cap
/// policy.maxAttempts = 5
/// policy.delay(afterAttempt: 2, retryAfter: nil)  // random in 0...1 s
/// ```
public struct RetryPolicy: Sendable, Hashable {
    /// Attempts in all, the first included. 3 by default; 1 disables retries.
    public var maxAttempts: Int
    /// The first backoff ceiling. 0.5 s by default.
    public var baseDelay: Double
    /// The largest backoff ceiling. 8 s by default.
    public var maxDelay: Double
    /// The longest `Retry-After` honoured; a longer one ends the retries. 30 s by default.
    public var maxRetryAfter: Double

    /// 3 attempts, 0.5 s base, 8 s cap, Retry-After up to 30 s.
    public static let `default` = RetryPolicy(maxAttempts: 3, baseDelay: 0.5, maxDelay: 8, maxRetryAfter: 30)
    /// One attempt only.
    public static let none = RetryPolicy(maxAttempts: 1, baseDelay: 0, maxDelay: 0, maxRetryAfter: 0)

    public init(maxAttempts: Int, baseDelay: Double, maxDelay: Double, maxRetryAfter: Double) {
        self.maxAttempts = max(1, maxAttempts)
        self.baseDelay = max(0, baseDelay)
        self.maxDelay = max(0, maxDelay)
        self.maxRetryAfter = max(0, maxRetryAfter)
    }

    /// The wait before attempt `attempt + 1`, or nil to stop (a Retry-After
    /// beyond ``maxRetryAfter``). Full jitter: uniform in `0...min(cap, base·2^(attempt−1))`;
    /// a Retry-After is used as given (the server asked for it).
    public func delay(afterAttempt attempt: Int, retryAfter: Double?,
                      random: (ClosedRange<Double>) -> Double = { Double.random(in: $0) }) -> Double? {
        if let retryAfter {
            return retryAfter <= maxRetryAfter ? max(0, retryAfter) : nil
        }
        let ceiling = min(maxDelay, baseDelay * pow(2, Double(max(0, attempt - 1))))
        return ceiling > 0 ? random(0...ceiling) : 0
    }

    /// Parses `Retry-After`: delta-seconds or an HTTP date.
    public static func retryAfter(_ header: String?, now: Date = Date()) -> Double? {
        guard let header = header?.trimmingCharacters(in: .whitespaces), !header.isEmpty else { return nil }
        if let seconds = Double(header), seconds.isFinite { return max(0, seconds) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: header).map { max(0, $0.timeIntervalSince(now)) }
    }
}
