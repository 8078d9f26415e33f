/// The clock a ``URLSessionTransport`` measures idle time on: any Swift
/// `Clock` with `Duration` steps, opened once into "time since the clock was
/// given" and "sleep on it". `ContinuousClock` by default; a test gives a
/// clock it controls (swift-clocks' `TestClock`), so the idle timeout fires
/// when the test says and no test waits for it in wall time.
public struct IdleClock: Sendable {
    /// Time passed on the clock since this value was made.
    let elapsed: @Sendable () -> Duration
    /// Sleeps `duration` on the clock; throws when the task is cancelled.
    let sleep: @Sendable (Duration) async throws -> Void

    public init<C: Clock>(_ clock: C) where C.Duration == Duration {
        let origin = clock.now
        elapsed = { origin.duration(to: clock.now) }
        sleep = { duration in try await clock.sleep(until: clock.now.advanced(by: duration), tolerance: nil) }
    }

    /// Wall time, never jumping backwards: `ContinuousClock`.
    public static let continuous = IdleClock(ContinuousClock())
}
