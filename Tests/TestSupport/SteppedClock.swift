import Foundation
import ConcurrencyToolkit

/// A clock that moves only when ``step(by:)`` moves it, at once and without
/// yielding. A sleeper on it wakes on the step that passes its deadline (an
/// ``Observed`` change, not a poll), and a test can wait for what sleeps on
/// it (``until(_:)``: "the watchdog sleeps until 3 s"). swift-clocks'
/// `TestClock` instead yields through tens of background-priority tasks on
/// every advance: seconds over a thousand steps, and over a minute in a busy
/// test process, where such tasks run last.
public final class SteppedClock: Clock, Sendable {
    public struct Instant: InstantProtocol {
        public var offset: Duration
        public init(offset: Duration) { self.offset = offset }
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    /// The clock's time and the deadlines of the tasks sleeping on it.
    public struct State: Sendable {
        public var now = Instant(offset: .zero)
        public var sleepers: [Int: Instant] = [:]
        var nextSleeper = 0

        /// Whether a task sleeps until `offset` from the clock's start, or later.
        public func sleeps(until offset: Duration) -> Bool { sleepers.values.contains { $0.offset >= offset } }
        /// How many tasks sleep until `offset` from the clock's start or earlier: those a step to `offset` wakes.
        public func sleepers(wokenBy offset: Duration) -> Int { sleepers.values.filter { $0.offset <= offset }.count }
    }

    private let state = Observed(State())
    public init() {}
    public var now: Instant { state.read { $0.now } }
    public var minimumResolution: Duration { .zero }
    /// The deadlines of the tasks sleeping on the clock now, as offsets from its start, earliest first (for messages).
    public var sleeping: [Duration] { state.read { $0.sleepers.values.map(\.offset).sorted() } }

    /// Moves the clock forward by `duration`.
    public func step(by duration: Duration) {
        state.withLock { $0.now = $0.now.advanced(by: duration) }
    }

    /// Moves the clock to `offset` from its start (never backwards).
    public func step(to offset: Duration) {
        state.withLock { $0.now = Instant(offset: max($0.now.offset, offset)) }
    }

    /// Returns once the clock has been stepped to `deadline`.
    /// - Throws: `CancellationError` when the sleeping task is cancelled first.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let sleeper = state.withLock { state in
            defer { state.nextSleeper += 1 }
            state.sleepers[state.nextSleeper] = deadline
            return state.nextSleeper
        }
        defer { state.withLock { _ = $0.sleepers.removeValue(forKey: sleeper) } }
        _ = await state.until { state.read { $0.now >= deadline } }
        try Task.checkCancellation()
    }

    /// Returns true once `condition` holds of the clock's state (at once when it does; after the step or the
    /// sleep that makes it hold otherwise); false when the waiting task is cancelled first.
    public func until(_ condition: @escaping (State) -> Bool) async -> Bool {
        await state.until { state.read(condition) }
    }
}
