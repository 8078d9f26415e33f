import Foundation
import Synchronization

/// Connections open now, in all and by peer address, shared by every connection's ``ConnectionGuard``.
final class ConnectionCounter: Sendable {
    let state = Mutex<(total: Int, byAddress: [String: Int])>((0, [:]))

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

    /// Connections open now.
    var total: Int { state.withLock { $0.total } }
}
