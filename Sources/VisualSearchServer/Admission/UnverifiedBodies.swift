import Foundation
import ConcurrencyToolkit

/// The places for reading bodies of requests whose head carries no
/// credential (``UnverifiedBodyLimits``): a few in all, fewer per address.
/// A request holds one only while admission reads its body; once its form's
/// credentials are checked it gives the place back before it asks for a lane slot.
final class UnverifiedBodies: Sendable {
    /// Why a body may not be read now.
    enum Refusal: Equatable {
        /// Its address reads `limit` bodies already.
        case client(limit: Int)
        /// `limit` bodies are being read already.
        case full(limit: Int)
    }

    struct State {
        var total = 0
        var byAddress: [String: Int] = [:]
    }

    let limits: UnverifiedBodyLimits
    let state = Observed(State())

    init(limits: UnverifiedBodyLimits) {
        self.limits = limits
    }

    /// Returns true once `condition` holds, checked again after each change of this count (an observation hook,
    /// never a timer); false when the waiting task is cancelled first.
    func until(_ condition: () -> Bool) async -> Bool { await state.until(condition) }

    /// Bodies being read now, in all.
    var inFlight: Int { state.read { $0.total } }

    /// Takes a place for a body from `address`: nil when taken (then ``release(for:)``), else why not.
    func take(for address: String) -> Refusal? {
        state.withLock { state in
            let held = state.byAddress[address, default: 0]
            if held >= max(1, limits.maxPerClient) { return .client(limit: max(1, limits.maxPerClient)) }
            if state.total >= max(1, limits.maxInFlight) { return .full(limit: max(1, limits.maxInFlight)) }
            state.total += 1
            state.byAddress[address] = held + 1
            return nil
        }
    }

    /// Gives back a place ``take(for:)`` gave.
    func release(for address: String) {
        state.withLock { state in
            state.total -= 1
            let left = state.byAddress[address, default: 0] - 1
            state.byAddress[address] = left > 0 ? left : nil
        }
    }
}
