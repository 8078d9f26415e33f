#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value behind a lock that ThreadSanitizer can see: the one lock of the
/// package (docs/decisions.md, "A lock ThreadSanitizer can see").
///
/// The standard library's `Synchronization.Mutex` waits on a futex in its
/// contended path, which ThreadSanitizer does not model: every access that
/// was ordered by a contended `Mutex` was reported as a race (551 reports over
/// the suite, docs/fuzzing.md). `Locked` holds a `pthread_mutex_t`, whose
/// lock and unlock ThreadSanitizer intercepts, so the order it gives is seen.
/// Uncontended, both cost one atomic operation each way.
///
/// ```swift
/// let counts = Locked([String: Int]())
/// counts.withLock { $0["a", default: 0] += 1 }
/// let a = counts.withLock { $0["a"] }
/// ```
///
/// The value is reached only inside ``withLock(_:)``; the closure must not
/// call ``withLock(_:)`` of the same lock (it is not recursive) and should
/// not wait on anything.
public final class Locked<Value>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    public init(_ value: Value) {
        self.value = value
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed: \(status)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with the value, the lock held, and returns what it returns.
    public func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
