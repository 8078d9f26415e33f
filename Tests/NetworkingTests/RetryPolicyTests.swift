import Foundation
import Networking
import Testing

@Suite("RetryPolicy: how long to wait, and when to stop")
struct RetryPolicyTests {
    static let upper: @Sendable (ClosedRange<Double>) -> Double = { $0.upperBound }
    static let lower: @Sendable (ClosedRange<Double>) -> Double = { $0.lowerBound }
    static let middle: @Sendable (ClosedRange<Double>) -> Double = { ($0.lowerBound + $0.upperBound) / 2 }

    @Test("the presets are the client's and the tracker's", arguments: [
        (RetryPolicy.default, 3, 0.5, 8.0, 30.0),
        (RetryPolicy.none, 1, 0, 0, 0),
        (RetryPolicy.delivery, Int.max, 0.5, 60, 60),
    ])
    func presets(policy: RetryPolicy, attempts: Int, base: Double, cap: Double, retryAfter: Double) {
        #expect(policy.maxAttempts == attempts && policy.baseDelay == base && policy.maxDelay == cap && policy.maxRetryAfter == retryAfter)
        #expect(policy.jitter == 1)
    }

    @Test("jitter 0: exactly the ceiling, doubling from the base up to the cap")
    func exactCeilings() {
        let policy = RetryPolicy(maxAttempts: .max, baseDelay: 0.5, maxDelay: 60, maxRetryAfter: 60, jitter: 0)
        let waits = (1...10).map { policy.delay(afterAttempt: $0, retryAfter: nil, random: { _ in Issue.record("jitter 0 draws nothing"); return 0 }) }
        #expect(waits == [0.5, 1, 2, 4, 8, 16, 32, 60, 60, 60])
        #expect(policy.delay(afterAttempt: 10_000, retryAfter: nil) == 60)  // no overflow however long the streak
    }

    @Test("full jitter draws in 0...ceiling: the draw is passed the whole range", arguments: [
        (1, 0.5, 0.25, 0.0),
        (2, 1.0, 0.5, 0.0),
        (4, 4.0, 2.0, 0.0),
        (5, 8.0, 4.0, 0.0),
        (9, 8.0, 4.0, 0.0),
    ])
    func fullJitter(attempt: Int, ceiling: Double, middle: Double, floor: Double) {
        let policy = RetryPolicy(maxAttempts: 10, baseDelay: 0.5, maxDelay: 8, maxRetryAfter: 30)
        #expect(policy.delay(afterAttempt: attempt, retryAfter: nil, random: Self.upper) == ceiling)
        #expect(policy.delay(afterAttempt: attempt, retryAfter: nil, random: Self.middle) == middle)
        #expect(policy.delay(afterAttempt: attempt, retryAfter: nil, random: Self.lower) == floor)
    }

    @Test("partial jitter randomises only that share of the ceiling")
    func partialJitter() {
        let policy = RetryPolicy(maxAttempts: 5, baseDelay: 1, maxDelay: 8, maxRetryAfter: 30, jitter: 0.25)
        #expect(policy.delay(afterAttempt: 3, retryAfter: nil, random: Self.lower) == 3)
        #expect(policy.delay(afterAttempt: 3, retryAfter: nil, random: Self.upper) == 4)
    }

    @Test("attempts exhausted: nil after the last attempt, whatever the server asked")
    func exhausted() {
        #expect(RetryPolicy.default.delay(afterAttempt: 2, retryAfter: nil) != nil)
        #expect(RetryPolicy.default.delay(afterAttempt: 3, retryAfter: nil) == nil)
        #expect(RetryPolicy.default.delay(afterAttempt: 3, retryAfter: 1) == nil)
        #expect(RetryPolicy.none.delay(afterAttempt: 1, retryAfter: nil) == nil)
    }

    @Test("Retry-After replaces the backoff; too long ends finite retries and is capped for unbounded ones", arguments: [
        (RetryPolicy.default, 2.0, 2.0 as Double?),
        (RetryPolicy.default, 30, 30),
        (RetryPolicy.default, 31, nil),
        (RetryPolicy.default, -4, 0),
        (RetryPolicy.delivery, 7, 7),
        (RetryPolicy.delivery, 600, 60),
    ])
    func retryAfterWait(policy: RetryPolicy, asked: Double, expected: Double?) {
        #expect(policy.delay(afterAttempt: 1, retryAfter: asked, random: Self.lower) == expected)
    }

    @Test("out-of-range settings are clamped")
    func clamped() {
        let policy = RetryPolicy(maxAttempts: 0, baseDelay: -1, maxDelay: -1, maxRetryAfter: -1, jitter: 3)
        #expect(policy.maxAttempts == 1 && policy.baseDelay == 0 && policy.maxDelay == 0 && policy.maxRetryAfter == 0 && policy.jitter == 1)
        #expect(RetryPolicy(maxAttempts: 2, baseDelay: 0, maxDelay: 0, maxRetryAfter: 0).delay(afterAttempt: 1, retryAfter: nil) == 0)
    }

    @Test("retryable statuses: 408, 429 and 5xx only", arguments: [
        (200, false), (301, false), (400, false), (401, false), (404, false), (408, true), (413, false),
        (429, true), (500, true), (502, true), (503, true), (504, true), (599, true), (600, false),
    ])
    func retryable(status: Int, expected: Bool) {
        #expect(RetryPolicy.isRetryable(status: status) == expected)
    }

    /// 1994-11-06 08:49:30 GMT, seven seconds before RFC 9110's example date.
    static let now = Date(timeIntervalSince1970: 784_111_770)

    @Test("Retry-After: delta-seconds and all three HTTP-date forms", arguments: [
        ("120", 120.0 as Double?),
        ("  5 ", 5),
        ("0", 0),
        ("1.5", 1.5),
        ("Sun, 06 Nov 1994 08:49:37 GMT", 7),
        ("Sunday, 06-Nov-94 08:49:37 GMT", 7),
        ("Sun Nov  6 08:49:37 1994", 7),
        ("Sun, 06 Nov 1994 08:49:00 GMT", 0),          // in the past: no wait
        ("Mon, 07 Nov 1994 08:49:30 GMT", 86_400),
        ("sun, 06 nov 1994 08:49:40 gmt", 10),           // names are case-insensitive
        ("", nil),
        ("soon", nil),
        ("-5", nil),
        ("1e3", nil),
        ("Sun, 06 Nov 1994 08:49:37 PST", nil),
        ("Sun, 31 Foo 1994 08:49:37 GMT", nil),
        ("Sun, 06 Nov 1994 25:49:37 GMT", nil),
        ("Sun, 06 Nov 1994 08:49 GMT", nil),
    ])
    func retryAfterParsing(header: String, expected: Double?) {
        #expect(RetryPolicy.retryAfter(header, now: Self.now) == expected)
    }

    @Test("Retry-After absent: nil")
    func retryAfterAbsent() {
        #expect(RetryPolicy.retryAfter(nil) == nil)
    }

    @Test("an RFC 850 two-digit year is never read as more than 50 years ahead")
    func twoDigitYears() {
        let newYear2026 = Date(timeIntervalSince1970: 1_767_225_600)
        #expect(RetryPolicy.retryAfter("Thursday, 01-Jan-26 00:00:10 GMT", now: newYear2026) == 10)
        #expect(RetryPolicy.retryAfter("Friday, 01-Jan-99 00:00:00 GMT", now: newYear2026) == 0)  // 1999, the past
    }
}
