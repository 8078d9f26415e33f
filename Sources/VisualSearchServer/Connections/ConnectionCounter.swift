import Foundation
import ConcurrencyToolkit

/// Connections open now, in all and by peer address, shared by every connection's ``ConnectionGuard``.
final class ConnectionCounter: Sendable {
    let state = Observed<(total: Int, byAddress: [String: Int])>((0, [:]))

    /// Counts a new connection; returns the totals including it.
    func open(from address: String) -> (total: Int, fromAddress: Int) {
        state.withLock { state in
            state.total += 1
            state.byAddress[address, default: 0] += 1
            return (state.total, state.byAddress[address] ?? 0)
        }
    }

    /// Counts a connection closed; returns the total left.
    func close(from address: String) -> Int {
        state.withLock { state in
            state.total -= 1
            let left = (state.byAddress[address] ?? 1) - 1
            state.byAddress[address] = left > 0 ? left : nil
            return state.total
        }
    }

    /// Returns true once `condition` holds, checked again after each change of this counter (an observation hook,
    /// never a timer); false when the waiting task is cancelled first.
    func until(_ condition: () -> Bool) async -> Bool { await state.until(condition) }

    /// Connections open now.
    var total: Int { state.read { $0.total } }

    /// Refused connections held for the refusal delay, apart from the others (so they cannot fill the table).
    let held = Locked(0)

    /// Moves a counted connection to the held ones, if fewer than `limit` are held; false otherwise.
    func hold(from address: String, limit: Int) -> Bool {
        let accepted = held.withLock { held -> Bool in
            guard held < limit else { return false }
            held += 1
            return true
        }
        if accepted { _ = close(from: address) }
        return accepted
    }

    /// A held connection closed.
    func release() {
        held.withLock { $0 -= 1 }
    }
}
