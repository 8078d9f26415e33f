import Foundation

/// Bytes that concurrent jobs may hold at once: a job reserves what its
/// source will take before decoding and waits while the others' reservations
/// leave too little. A job alone always runs (a reservation larger than the
/// budget is charged as the whole budget), so the budget orders work, it
/// never refuses it.
///
/// Worker threads of a batch job share one budget; waiting blocks the worker
/// thread (never a Swift concurrency task).
///
/// ```swift
/// let budget = MemoryBudget(bytes: 240_000_000)
/// let reservation = budget.reserve(need)
/// defer { budget.release(reservation) }
/// ```
public final class MemoryBudget: @unchecked Sendable {  // state guarded by `condition`
    /// The bytes jobs may hold together.
    public let bytes: Int
    private let condition = NSCondition()
    private var reserved = 0
    private var waiting = 0

    /// A budget of `bytes` (at least 1).
    public init(bytes: Int) { self.bytes = max(1, bytes) }

    /// Waits until `need` bytes fit beside the other reservations (or nothing
    /// else is reserved), reserves them and returns what was reserved.
    public func reserve(_ need: Int) -> Int {
        let charge = min(max(0, need), bytes)
        condition.lock()
        defer { condition.unlock() }
        while reserved > 0 && reserved + charge > bytes {
            waiting += 1
            condition.wait()
            waiting -= 1
        }
        reserved += charge
        return charge
    }

    /// Returns a reservation made by ``reserve(_:)``.
    public func release(_ reservation: Int) {
        condition.lock()
        reserved -= reservation
        condition.broadcast()
        condition.unlock()
    }

    /// Bytes reserved now (tests).
    var reservedBytes: Int {
        condition.lock()
        defer { condition.unlock() }
        return reserved
    }

    /// Jobs waiting for room now (tests).
    var waitingJobs: Int {
        condition.lock()
        defer { condition.unlock() }
        return waiting
    }
}
