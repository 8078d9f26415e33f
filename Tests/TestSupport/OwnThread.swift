import Foundation

/// Runs `body` on a thread of its own and returns its result: for a test's
/// long blocking or spinning work (a reader racing a graph's writer), which
/// on a thread of the cooperative pool would starve every other test's
/// tasks — the pool has as many threads as the machine has cores.
public func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread { continuation.resume(returning: body()) }
    }
}
