import Foundation
import ConcurrencyToolkit

/// Request bodies held in memory, reserved from their declared length before
/// they are read (``ServerLimits/maxBodyBytesInFlight``), in three bounds:
///
/// - all bodies: the budget;
/// - one client's bodies: a quarter of it (64 MiB by default: four bodies
///   of the 16 MiB limit), so no client — and no address — takes it all;
/// - on a server with keys, the bodies of requests without a verified key
///   (the collector's, wrong keys, keys only in a form body): a quarter in
///   all, so keyless clients can never hold the memory uploads with a key need.
///
/// A body that does not fit is refused before a byte of it is read.
final class BodyBudget: Sendable {
    /// Why a body does not fit.
    enum Refusal: Equatable {
        /// Every body in memory: at the budget.
        case full(limit: Int)
        /// This client's bodies: at its share.
        case clientShare(limit: Int)
        /// Requests without a verified key: at their share.
        case unauthenticatedShare(limit: Int)
    }

    struct State {
        var total = 0
        var unauthenticated = 0
        var byClient: [String: Int] = [:]
    }

    let limit: Int
    let clientShare: Int
    let unauthenticatedShare: Int
    let state = Observed(State())

    init(limit: Int) {
        self.limit = max(1, limit)
        clientShare = max(1, limit / 4)
        unauthenticatedShare = max(1, limit / 4)
    }

    /// Returns true once `condition` holds, checked again after each change of this budget (an observation hook,
    /// never a timer); false when the waiting task is cancelled first.
    func until(_ condition: () -> Bool) async -> Bool { await state.until(condition) }

    /// Bytes reserved now, in all.
    var reserved: Int { state.read { $0.total } }

    /// Reserves `bytes` for `client`; nil when reserved (then ``release(_:for:)``),
    /// else the bound it would pass. A body larger than a bound on its own
    /// is reserved when nothing else holds that bound, so one largest body always fits.
    func reserve(_ bytes: Int, for client: ClientIdentity) -> Refusal? {
        guard bytes > 0 else { return nil }
        return state.withLock { state in
            let held = state.byClient[client.key, default: 0]
            if held > 0 && held + bytes > clientShare { return .clientShare(limit: clientShare) }
            if !client.authenticated && state.unauthenticated > 0 && state.unauthenticated + bytes > unauthenticatedShare {
                return .unauthenticatedShare(limit: unauthenticatedShare)
            }
            if state.total > 0 && state.total + bytes > limit { return .full(limit: limit) }
            state.total += bytes
            if !client.authenticated { state.unauthenticated += bytes }
            state.byClient[client.key] = held + bytes
            return nil
        }
    }

    /// Gives back what ``reserve(_:for:)`` reserved.
    func release(_ bytes: Int, for client: ClientIdentity) {
        guard bytes > 0 else { return }
        state.withLock { state in
            state.total -= bytes
            if !client.authenticated { state.unauthenticated -= bytes }
            let left = state.byClient[client.key, default: 0] - bytes
            state.byClient[client.key] = left > 0 ? left : nil
        }
    }
}
