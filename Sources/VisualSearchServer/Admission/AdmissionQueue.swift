import Foundation
import ConcurrencyToolkit

/// Requests of one kind in flight, with a bounded queue in front: up to
/// `limit` run; up to `maxQueued` more wait their turn (first come, first
/// served) for at most `maxWait`, on the ``ElapsedClock`` given at init;
/// anything beyond is shed at once. A shed request is answered 503 with
/// `Retry-After` — a fast, honest "not now" instead of a wait without bound.
final class AdmissionQueue: Sendable {
    let limit: Int
    let maxQueued: Int
    let maxWait: Duration
    let clock: ElapsedClock

    let state: Observed<State>

    /// Requests waiting for a slot, each resumed with true (admitted) or false (shed).
    typealias Waiting = WaitQueue<CheckedContinuation<Bool, Never>>

    struct State {
        var running = 0
        var waiting: Waiting
    }

    init(limit: Int, maxQueued: Int, maxWait: Duration, clock: ElapsedClock = ElapsedClock()) {
        self.limit = max(1, limit)
        self.maxQueued = max(0, maxQueued)
        self.maxWait = maxWait
        self.clock = clock
        state = Observed(State(waiting: Waiting(capacity: maxQueued, maxWait: maxWait)))
    }

    /// Returns true once `condition` holds, checked again after each change of this queue's counts (an observation hook,
    /// never a timer); false when the waiting task is cancelled first.
    func until(_ condition: () -> Bool) async -> Bool { await state.until(condition) }

    /// Requests running and waiting now.
    var counts: (running: Int, queued: Int) { state.read { ($0.running, $0.waiting.count) } }

    /// Waits for a slot: true when admitted (then ``release()`` when done),
    /// false when shed (the queue is full, the wait ran out, or the task was cancelled).
    func acquire() async -> Bool {
        enum Entry { case admitted, shed, queued(Waiting.Ticket) }
        let now = clock.now
        let entry: Entry = state.withLock { state in
            if state.running < limit && state.waiting.isEmpty {
                state.running += 1
                return .admitted
            }
            if state.waiting.isFull { return .shed }
            return .queued(state.waiting.ticket(now: now))
        }
        let ticket: Waiting.Ticket
        switch entry {
        case .admitted: return true
        case .shed: return false
        case .queued(let queued): ticket = queued
        }
        // The deadline was fixed by the ticket, before the waiter joins the queue: a clock advanced once it is queued
        // always reaches it.
        let deadline = WaitDeadline(at: ticket.deadline, on: clock) { [weak self] in self?.give(up: ticket) }
        defer { deadline.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let admitted: Bool? = state.withLock { state in
                    if state.running < limit && state.waiting.isEmpty {
                        state.running += 1
                        return true
                    }
                    return state.waiting.append(continuation, with: ticket) ? nil : false
                }
                if let admitted { continuation.resume(returning: admitted) }
            }
        } onCancel: {
            give(up: ticket)
        }
    }

    /// Frees a slot and hands it to the longest waiter.
    func release() {
        let next: CheckedContinuation<Bool, Never>? = state.withLock { state in
            if state.waiting.isEmpty {
                state.running -= 1
                return nil
            }
            return state.waiting.removeFirst()  // the slot passes on: running stays
        }
        next?.resume(returning: true)
    }

    /// Sheds a waiter whose time ran out (or whose task was cancelled).
    func give(up ticket: Waiting.Ticket) {
        let waiter = state.withLock { $0.waiting.remove(ticket) }
        waiter?.resume(returning: false)
    }
}
