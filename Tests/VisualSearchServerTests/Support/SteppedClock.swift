import Foundation
import Synchronization

/// A clock that moves only when ``step(by:)`` moves it, at once and without
/// yielding: for loops of a thousand instants over code that only reads the
/// time (the client limiter). swift-clocks' `TestClock` does the same but
/// yields to other tasks on every advance (tens of detached tasks each), which
/// costs seconds over a thousand steps on a loaded machine; use `TestClock`
/// where something sleeps on the clock.
final class SteppedClock: Clock, Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private let current = Mutex(Instant(offset: .zero))
    var now: Instant { current.withLock { $0 } }
    var minimumResolution: Duration { .zero }

    /// Moves the clock forward by `duration`.
    func step(by duration: Duration) {
        current.withLock { $0 = $0.advanced(by: duration) }
    }

    /// Moves the clock to `offset` from its start (never backwards).
    func step(to offset: Duration) {
        current.withLock { $0 = Instant(offset: max($0.offset, offset)) }
    }

    /// Returns once the clock has been stepped to `deadline` (polled: nothing in these tests sleeps on it for long).
    func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        while now < deadline { try await Task.sleep(for: .milliseconds(1)) }
    }
}
