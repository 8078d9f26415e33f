import Foundation

/// Where work that blocks its thread runs: on a thread of its own, never on
/// Swift's cooperative pool. The package's one way to start a thread
/// (a house rule checks it).
///
/// The rule, what may block and where:
/// - **A task on the cooperative pool never blocks.** The pool has one
///   thread per core (two here): a task that waits there (a DNS lookup, an
///   SQLite open and migration, an HNSW graph built or saved, vectors loaded
///   from disk, a join of worker threads) stops every other task of the
///   process — a server's requests, the other tests — for as long.
/// - **Such work runs in ``run(named:_:)``**: a thread started for it and
///   ended with it, awaited without holding the caller's thread.
/// - **Work whose caller waits by other means** (a continuation resumed by
///   whichever comes first, a lookup or its timeout) and **long-lived workers**
///   (the image pool's threads, a job's kernel workers) start with
///   ``start(named:stackSize:_:)``. Those threads may block (wait for a job,
///   join their helpers): they are not the pool's.
/// - Database access goes through the driver's own async API (GRDB's
///   `read`/`write`, PostgresNIO): they run on their own threads already.
///
/// A thread per call costs tens of microseconds; the work sent here takes
/// milliseconds to minutes. Every thread is named for the kernel (`top -H`, `perf`).
///
/// ```swift
/// let graph = try await OwnThread.run(named: "vsearch-hnsw") { () throws(HNSWGraphError) in try build() }
/// ```
public enum OwnThread {
    /// Runs `body` on a thread of its own, named `name`, and returns what it
    /// returns (or throws what it throws); the caller's task is suspended meanwhile, its thread free.
    public static func run<T: Sendable, Failure: Error>(named name: String,
                                                        _ body: @escaping @Sendable () throws(Failure) -> T) async throws(Failure) -> T {
        let handoff = Handoff<Result<T, Failure>>()
        let result = await handoff.value {
            start(named: name) { handoff.resume(Result { () throws(Failure) in try body() }) }
        }
        return try result.get()
    }

    /// Starts `body` on a thread of its own, named `name`, and returns at
    /// once: for a caller that waits by other means, or a long-lived worker.
    /// - Parameter stackSize: bytes of stack, when the thread needs more than the default (image kernels).
    public static func start(named name: String, stackSize: Int? = nil, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread {
            nameCallingThread(name)
            body()
        }
        if let stackSize { thread.stackSize = stackSize }
        thread.start()
    }

    /// Names the calling thread for the kernel (`top -H`, `perf`, `/proc`). Foundation's `Thread.name`, set
    /// from inside a new thread, can run before the thread object knows its pthread and then never reaches
    /// the kernel (the thread keeps its creator's name), so the name is written to `/proc/thread-self/comm`.
    public static func nameCallingThread(_ name: String) {
        #if os(Linux)
        let descriptor = open("/proc/thread-self/comm", O_WRONLY)
        if descriptor >= 0 {
            let bytes = Array(name.utf8.prefix(15))  // the kernel keeps 15 bytes
            _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            close(descriptor)
        }
        #endif
        Thread.current.name = name
    }
}
