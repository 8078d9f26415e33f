/// How many data API insert transactions one engine runs and keeps waiting
/// at once (issue 37: nothing capped them, and four transactions of sixteen
/// 15 MB remote images each took 1.07 GB). Each running transaction fetches
/// a batch of images and decodes it on the engine's ``ImageWorkPool``;
/// transactions beyond ``maxRunning`` wait, in order, and beyond
/// ``maxQueued`` waiting `/insert` is refused with
/// ``VisualSearchError/overloaded(reason:retryAfter:)`` (HTTP 503 with
/// `Retry-After`) before anything is saved — send it again later.
///
/// ```swift
/// var configuration = VisualSearchEngine.Configuration()
/// configuration.inserts = InsertLimits(maxRunning: 1, maxQueued: 4)
/// ```
public struct InsertLimits: Sendable, Hashable {
    /// Transactions fetching and indexing at once: 2 by default.
    public var maxRunning: Int
    /// Transactions accepted to wait for one of those: 8 by default; more are refused (503).
    public var maxQueued: Int
    /// Seconds a refused insert is told to wait (`Retry-After`): 10 by default.
    public var retryAfter: Int

    /// Limits with the documented defaults.
    public init(maxRunning: Int = 2, maxQueued: Int = 8, retryAfter: Int = 10) {
        self.maxRunning = max(1, maxRunning)
        self.maxQueued = max(0, maxQueued)
        self.retryAfter = max(1, retryAfter)
    }
}
