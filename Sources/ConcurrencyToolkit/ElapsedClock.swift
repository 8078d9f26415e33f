/// A clock opened once into "time since it was given" and "sleep on it": the
/// one clock type of the package's deadlines (admission's queue waits and
/// token buckets, the HTTP transport's idle timeout).
///
/// Any Swift `Clock` with `Duration` steps can be given: `ContinuousClock`
/// in production, a clock a test advances itself (swift-clocks' `TestClock`)
/// so a deadline fires when the test says and no test waits for it in wall
/// time. Times are `Duration`s since the clock was given, so code holding
/// one never names the clock's `Instant` type.
public struct ElapsedClock: Sendable {
    private let elapsed: @Sendable () -> Duration
    private let sleeper: @Sendable (Duration) async throws -> Void

    public init(_ clock: any Clock<Duration> = ContinuousClock()) {
        self.init(opening: clock)
    }

    private init<C: Clock<Duration>>(opening clock: C) {
        let origin = clock.now
        elapsed = { origin.duration(to: clock.now) }
        sleeper = { deadline in try await clock.sleep(until: origin.advanced(by: deadline), tolerance: nil) }
    }

    /// Wall time, never jumping backwards: `ContinuousClock`.
    public static let continuous = ElapsedClock()

    /// Time since the clock was given.
    public var now: Duration { elapsed() }

    /// Sleeps until `deadline` (a ``now`` value); throws when the task is cancelled.
    public func sleep(until deadline: Duration) async throws {
        try await sleeper(deadline)
    }

    /// Sleeps `duration` from now; throws when the task is cancelled.
    public func sleep(for duration: Duration) async throws {
        try await sleeper(now + duration)
    }
}
