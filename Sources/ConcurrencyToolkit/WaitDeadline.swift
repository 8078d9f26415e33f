/// The deadline of something waiting in a bounded queue, kept on an
/// ``ElapsedClock``: `expire` runs once the clock reaches it, unless
/// ``cancel()`` came first (the waiter was admitted, refused or gave up).
/// The one deadline of the package's queues (admission's slots, the image
/// pool's decodes): on the clock they were given, so a test steps it and no
/// test waits for a deadline in wall time.
///
/// ```swift
/// let deadline = WaitDeadline(at: clock.now + maxWait, on: clock) { queue.shed(id) }
/// defer { deadline.cancel() }
/// ```
public struct WaitDeadline: Sendable {
    private let timer: Task<Void, Never>

    /// Runs `expire` once `clock` reaches `deadline` (a ``ElapsedClock/now`` value, fixed by the caller
    /// before the waiter joins its queue, so a clock stepped once it waits always reaches it).
    public init(at deadline: Duration, on clock: ElapsedClock, _ expire: @escaping @Sendable () -> Void) {
        timer = Task {
            do { try await clock.sleep(until: deadline) } catch { return }
            if !Task.isCancelled { expire() }
        }
    }

    /// The waiter no longer waits: `expire` will not run (when it has not run already).
    public func cancel() { timer.cancel() }
}
