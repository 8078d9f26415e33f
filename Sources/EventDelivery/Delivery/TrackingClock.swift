import Foundation
import Tracking

/// Time for the tracker: what time it is and how to wait. Injected so tests
/// of backoff run instantly and deterministically.
public protocol TrackingClock: Sendable {
    func now() -> Date
    /// Waits; throws when the waiting task is cancelled.
    func sleep(seconds: Double) async throws
}

/// The real clock.
public struct SystemTrackingClock: TrackingClock {
    /// The system clock.
    public init() {}
    /// The current time.
    public func now() -> Date { Date() }
    /// `Task.sleep`; throws `CancellationError` when the task is cancelled.
    public func sleep(seconds: Double) async throws {
        try await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1e9))
    }
}
