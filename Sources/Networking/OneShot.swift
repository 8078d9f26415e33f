import ConcurrencyToolkit

/// The first of several racers' values, awaited once: whichever of them
/// calls ``resume(_:)`` first wins, and a value that arrives before the
/// waiter is kept for it.
///
/// The value passes through the lock, not through the continuation: the
/// waiter reads it under the lock the winner wrote it under, so
/// ThreadSanitizer sees the hand-off (the continuation's own resumption, in
/// the uninstrumented concurrency runtime, it does not: a DNS thread's
/// answer read by the resumed task was reported as a race).
///
/// ```swift
/// let gate = OneShot<Int>()
/// let value = await gate.value { OwnThread.start(named: "work") { gate.resume(42) } }
/// ```
final class OneShot<Value: Sendable>: Sendable {
    private struct State {
        var value: Value?
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Locked(State())

    init() {}

    /// Runs `start` (which sets the racers going) once the wait is in place, then waits for the first value.
    func value(_ start: () -> Void) async -> Value {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let arrived = state.withLock { state in
                guard state.value == nil else { return true }
                state.waiter = continuation
                return false
            }
            if arrived { continuation.resume() }
            start()
        }
        // Only a resume that stored a value wakes the wait.
        return state.withLock { $0.value! }
    }

    /// Resumes with `value` unless something already did; returns whether this call won.
    @discardableResult
    func resume(_ value: Value) -> Bool {
        let (won, waiter) = state.withLock { state -> (Bool, CheckedContinuation<Void, Never>?) in
            guard state.value == nil else { return (false, nil) }
            state.value = value
            defer { state.waiter = nil }
            return (true, state.waiter)
        }
        waiter?.resume()
        return won
    }
}
