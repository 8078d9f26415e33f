import Dispatch

/// Work that blocks its thread — opening and migrating a SQLite file — run
/// on a Dispatch thread and awaited, so the cooperative pool (two threads on
/// a two-core machine) keeps running other tasks meanwhile.
enum BlockingWork {
    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async {
                continuation.resume(with: Result { try body() })
            }
        }
    }
}
