/// The waiters of a bounded queue: at most ``capacity`` of them, oldest
/// first, each with the moment its wait ends — ``maxWait`` after its
/// ``Ticket`` was taken, on the queue's ``ElapsedClock``.
///
/// The one queue of the package's two bounded waits: admission's slots
/// (first come, first served) and the image pool's decodes (clients take
/// turns within a pixel budget). A value, kept inside its owner's
/// ``Locked`` or ``Observed`` state: "is there room to start now?" and
/// "join the queue" are decided in one critical section, and what the two
/// owners differ in — what room is, who starts next — stays with them. The
/// owner arms a ``WaitDeadline`` at the ticket's deadline that takes its
/// waiter out with ``remove(_:)``.
///
/// ```swift
/// let now = clock.now
/// let ticket = state.withLock { $0.waiting.ticket(now: now) }       // the deadline is fixed before it joins
/// let deadline = WaitDeadline(at: ticket.deadline, on: clock) { shed(ticket) }
/// defer { deadline.cancel() }
/// let joined = state.withLock { $0.waiting.append(continuation, with: ticket) }   // false: full, refuse it
/// ```
public struct WaitQueue<Waiter> {
    /// A place in the queue, taken before its waiter joins: who it is and when its wait ends.
    public struct Ticket: Sendable, Hashable {
        /// Unique within the queue that issued it.
        public let id: Int
        /// An ``ElapsedClock/now`` value: ``maxWait`` after the ticket was taken.
        public let deadline: Duration
    }

    /// Waiters the queue holds at most; ``append(_:with:)`` refuses more.
    public let capacity: Int
    /// How long a waiter may wait: the distance from its ticket to its deadline.
    public let maxWait: Duration
    private var entries: [(ticket: Ticket, waiter: Waiter)] = []
    private var issued = 0

    /// An empty queue of at most `capacity` waiters (0: none waits), each for at most `maxWait`.
    public init(capacity: Int, maxWait: Duration) {
        self.capacity = Swift.max(0, capacity)
        self.maxWait = maxWait
    }

    /// True when ``append(_:with:)`` would refuse.
    public var isFull: Bool { entries.count >= capacity }

    /// A new place: a fresh id and the deadline `maxWait` after `now` (the clock's ``ElapsedClock/now``).
    public mutating func ticket(now: Duration) -> Ticket {
        issued += 1
        return Ticket(id: issued, deadline: now + maxWait)
    }

    /// Joins `waiter` at the back under `ticket`; false, leaving the queue as it was, when it is full.
    @discardableResult
    public mutating func append(_ waiter: Waiter, with ticket: Ticket) -> Bool {
        guard !isFull else { return false }
        entries.append((ticket, waiter))
        return true
    }

    /// Takes out the waiter holding `ticket` (its deadline passed, or it gave up); nil when it is no longer here.
    public mutating func remove(_ ticket: Ticket) -> Waiter? {
        guard let index = entries.firstIndex(where: { $0.ticket.id == ticket.id }) else { return nil }
        return entries.remove(at: index).waiter
    }

    /// Takes out the waiter at `index` (the one its owner starts next).
    public mutating func remove(at index: Int) -> Waiter {
        entries.remove(at: index).waiter
    }

    /// Takes out the oldest waiter; nil when none waits.
    public mutating func removeFirst() -> Waiter? {
        entries.isEmpty ? nil : entries.removeFirst().waiter
    }

    /// True while the waiter holding `ticket` is in the queue.
    public func contains(_ ticket: Ticket) -> Bool {
        entries.contains { $0.ticket.id == ticket.id }
    }
}

/// The waiters, oldest first.
extension WaitQueue: RandomAccessCollection {
    public var startIndex: Int { entries.startIndex }
    public var endIndex: Int { entries.endIndex }
    public subscript(position: Int) -> Waiter { entries[position].waiter }
}

extension WaitQueue: Sendable where Waiter: Sendable {}
