import Clocks
import ConcurrencyToolkit
import Testing

/// `ElapsedClock`: time since the clock was given, and sleeps on it — stepped by a test clock, never waited for.
@Suite("ElapsedClock")
struct ElapsedClockTests {
    @Test("now is the time since the clock was given, as the underlying clock advances")
    func now() async {
        let clock = TestClock()
        await clock.advance(by: .seconds(100))  // before: not counted
        let elapsed = ElapsedClock(clock)
        #expect(elapsed.now == .zero)
        await clock.advance(by: .milliseconds(2500))
        #expect(elapsed.now == .milliseconds(2500))
    }

    @Test("a sleep until a deadline ends when the clock reaches it, not before")
    func sleepUntil() async throws {
        let clock = TestClock()
        let elapsed = ElapsedClock(clock)
        let woke = Locked(false)
        let sleeper = Task {
            try await elapsed.sleep(until: .seconds(3))
            woke.withLock { $0 = true }
        }
        await clock.advance(by: .seconds(2))
        #expect(woke.withLock { $0 } == false)
        await clock.advance(by: .seconds(1))
        try await sleeper.value
        #expect(woke.withLock { $0 })
    }

    @Test("a cancelled sleep throws")
    func cancelledSleep() async {
        let elapsed = ElapsedClock(TestClock())
        let sleeper = Task { try await elapsed.sleep(for: .seconds(60)) }
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
    }
}
