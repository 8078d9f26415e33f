/// A value behind a ``Locked`` whose changes can be awaited: each
/// ``withLock(_:)`` counts as a change and wakes whoever waits in
/// ``until(_:)``, which checks its condition again then — never on a timer.
/// ``read(_:)`` reads without counting as a change (a condition reads so).
///
/// For state a server reaches on its own threads (a connection counted, a
/// request waiting in a queue, a body being read) that a test or a caller
/// must wait for: it waits for exactly that, however loaded the machine.
///
/// ```swift
/// let open = Observed(0)
/// Task { open.withLock { $0 += 1 } }
/// let reached = await open.until { open.read { $0 } == 1 }   // true once the task has run
/// ```
///
/// The condition may read anything (this value through ``read(_:)``, other
/// objects); it is checked outside the lock, after each change of this
/// value, so it should depend on this value's changes: a condition on
/// another object alone is checked only when this one changes.
public final class Observed<Value>: @unchecked Sendable {
    private struct State {
        var value: Value
        /// Counts changes: a waiter that saw one count sleeps until it moves.
        var changes: UInt64 = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter = 0
    }

    private let state: Locked<State>

    public init(_ value: Value) {
        state = Locked(State(value: value))
    }

    /// Runs `body` with the value, the lock held (not recursive, as ``Locked``), then wakes the waiters.
    public func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        let (result, woken) = try state.withLock { state throws(Failure) in
            let result = try body(&state.value)
            state.changes &+= 1
            guard !state.waiters.isEmpty else { return (result, [CheckedContinuation<Void, Never>]()) }
            let woken = Array(state.waiters.values)
            state.waiters.removeAll(keepingCapacity: true)
            return (result, woken)
        }
        for waiter in woken { waiter.resume() }
        return result
    }

    /// Runs `body` with the value, the lock held, counting no change: for reading.
    public func read<Result>(_ body: (Value) -> Result) -> Result {
        state.withLock { body($0.value) }
    }

    /// Returns true once `condition` holds — at once when it holds now, else
    /// after a change that makes it hold; false when the calling task is
    /// cancelled first (a test's time limit), with `condition` checked a last time.
    public func until(_ condition: () -> Bool) async -> Bool {
        while !Task.isCancelled {
            let seen = state.withLock { $0.changes }
            if condition() { return true }
            await change(after: seen)
        }
        return condition()
    }

    /// Returns once the value has changed since `seen` changes (at once when it has), or the task is cancelled.
    private func change(after seen: UInt64) async {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let waits = state.withLock { state in
                    guard state.changes == seen, !Task.isCancelled else { return false }
                    state.waiters[id] = continuation
                    return true
                }
                if !waits { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
