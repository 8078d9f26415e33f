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
    let state = Observed(State())

    struct State {
        var running = 0
        var waiting: [(id: Int, continuation: CheckedContinuation<Bool, Never>)] = []
        var nextID = 0
    }

    init(limit: Int, maxQueued: Int, maxWait: Duration, clock: ElapsedClock = ElapsedClock()) {
        self.limit = max(1, limit)
        self.maxQueued = max(0, maxQueued)
        self.maxWait = maxWait
        self.clock = clock
    }

    /// Returns true once `condition` holds, checked again after each change of this queue's counts (an observation hook,
    /// never a timer); false when the waiting task is cancelled first.
    func until(_ condition: () -> Bool) async -> Bool { await state.until(condition) }

    /// Requests running and waiting now.
    var counts: (running: Int, queued: Int) { state.read { ($0.running, $0.waiting.count) } }

    /// Waits for a slot: true when admitted (then ``release()`` when done),
    /// false when shed (the queue is full, the wait ran out, or the task was cancelled).
    func acquire() async -> Bool {
        enum Entry { case admitted, shed, queued(Int) }
        let entry: Entry = state.withLock { state in
            if state.running < limit && state.waiting.isEmpty {
                state.running += 1
                return .admitted
            }
            if state.waiting.count >= maxQueued { return .shed }
            state.nextID += 1
            return .queued(state.nextID)
        }
        let id: Int
        switch entry {
        case .admitted: return true
        case .shed: return false
        case .queued(let queued): id = queued
        }
        // The deadline is fixed before the waiter joins the queue: a clock advanced once it is queued always reaches it.
        let deadline = WaitDeadline(at: clock.now + maxWait, on: clock) { [weak self] in self?.give(up: id) }
        defer { deadline.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let admitted: Bool? = state.withLock { state in
                    if state.running < limit && state.waiting.isEmpty {
                        state.running += 1
                        return true
                    }
                    if state.waiting.count >= maxQueued { return false }
                    state.waiting.append((id, continuation))
                    return nil
                }
                if let admitted { continuation.resume(returning: admitted) }
            }
        } onCancel: {
            give(up: id)
        }
    }

    /// Frees a slot and hands it to the longest waiter.
    func release() {
        let next: CheckedContinuation<Bool, Never>? = state.withLock { state in
            if state.waiting.isEmpty {
                state.running -= 1
                return nil
            }
            return state.waiting.removeFirst().continuation  // the slot passes on: running stays
        }
        next?.resume(returning: true)
    }

    /// Sheds a waiter whose time ran out.
    func give(up id: Int) {
        let waiter: CheckedContinuation<Bool, Never>? = state.withLock { state in
            guard let index = state.waiting.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiting.remove(at: index).continuation
        }
        waiter?.resume(returning: false)
    }
}
