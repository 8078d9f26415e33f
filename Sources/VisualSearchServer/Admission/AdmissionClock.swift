import Foundation

/// The time admission keeps its rules by (``ServerConfiguration/admissionClock``):
/// any `Clock` with `Duration`, read as the time since admission began. The
/// token buckets of ``ClientLimiter`` refill by it and ``AdmissionQueue`` sheds
/// a waiter by it, so a test that passes a clock it advances itself checks
/// those rules without depending on how fast the machine runs. Production
/// passes `ContinuousClock()`.
struct AdmissionClock: Sendable {
    private let elapsed: @Sendable () -> Duration
    private let sleeper: @Sendable (Duration) async throws -> Void

    init(_ clock: any Clock<Duration> = ContinuousClock()) {
        self.init(opening: clock)
    }

    private init<C: Clock<Duration>>(opening clock: C) {
        let origin = clock.now
        elapsed = { origin.duration(to: clock.now) }
        sleeper = { deadline in try await clock.sleep(until: origin.advanced(by: deadline), tolerance: nil) }
    }

    /// Time since admission began.
    var now: Duration { elapsed() }

    /// Sleeps until `deadline` (a ``now`` value); throws when the task is cancelled.
    func sleep(until deadline: Duration) async throws {
        try await sleeper(deadline)
    }
}
