/// A value handed from another thread to a waiting task, once: whichever
/// of several racers calls ``resume(_:)`` first wins (an answer, a timeout,
/// a cancellation), and a value that arrives before the waiter is kept for it.
///
/// The value passes through a ``Locked``, not through the continuation: the
/// waiter reads it under the lock the winner wrote it under, so
/// ThreadSanitizer sees the hand-off. The continuation's own resumption, in
/// the concurrency runtime, it does not see on Linux: a DNS thread's answer
/// and an image thread's vectors, read by the resumed task, were reported as
/// races (docs/fuzzing.md). Every value a thread of ``OwnThread`` hands to a
/// task goes through one.
///
/// ```swift
/// let handoff = Handoff<Int>()
/// let value = await handoff.value { OwnThread.start(named: "work") { handoff.resume(42) } }
/// ```
public final class Handoff<Value: Sendable>: Sendable {
    private struct State {
        var value: Value?
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Locked(State())

    public init() {}

    /// Runs `start` (which sets the racers going) once the wait is in place, then waits for the first value.
    public func value(_ start: () -> Void) async -> Value {
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
    public func resume(_ value: Value) -> Bool {
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
