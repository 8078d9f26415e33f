import ConcurrencyToolkit

/// When the engine last asked its catalog for the version counter, so a busy
/// engine asks at most once per ``VisualSearchEngine/Configuration/versionCheckInterval``:
/// with an async store each ask is a hop to the database's thread (about
/// 25 µs on a SQLite catalog, bench/RESULTS.md), which a search by `im_name`
/// otherwise paid every time. The engine's own writes (removals, insert
/// batches) forget the last ask, so they are seen by the next query.
final class VersionCheck: Sendable {
    let checked = Locked<ContinuousClock.Instant?>(nil)

    /// Whether the version read at the last ask may be used at `now`.
    func isFresh(at now: ContinuousClock.Instant, interval: Duration) -> Bool {
        checked.withLock { last in last.map { now - $0 < interval } ?? false }
    }

    func record(_ instant: ContinuousClock.Instant) { checked.withLock { $0 = instant } }

    /// The catalog changed here: the next query asks again.
    func forget() { checked.withLock { $0 = nil } }
}
