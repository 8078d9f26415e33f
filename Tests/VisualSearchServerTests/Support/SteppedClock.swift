import Foundation
import ConcurrencyToolkit

/// A clock that moves only when ``step(by:)`` moves it, at once and without
/// yielding. Sleepers on it poll every millisecond and wake once it has been
/// stepped past their deadline. swift-clocks' `TestClock` instead yields
/// through tens of background-priority tasks on every advance: seconds over a
/// thousand steps, and over a minute in a busy test process, where such tasks run last.
final class SteppedClock: Clock, Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private let current = Locked(Instant(offset: .zero))
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
