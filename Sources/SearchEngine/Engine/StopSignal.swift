import Synchronization

/// A flag one task raises for work running elsewhere (an ``ImageWorkPool``
/// thread, where `Task.isCancelled` means nothing) to read between its steps:
/// the request that wanted the work was answered, or its deadline passed.
///
/// ```swift
/// let stop = StopSignal()
/// let features = try await withTaskCancellationHandler {
///     try await pool.run(pixels: cost) { work(shouldStop: { stop.isRaised }) }
/// } onCancel: { stop.raise() }
/// ```
final class StopSignal: Sendable {
    private let raised = Atomic(false)

    /// Asks the work to stop at its next check.
    func raise() { raised.store(true, ordering: .relaxed) }

    /// Whether the work should stop.
    var isRaised: Bool { raised.load(ordering: .relaxed) }
}
