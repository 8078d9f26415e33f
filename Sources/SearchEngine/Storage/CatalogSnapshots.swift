import Tracking
import VisualSearch

/// The snapshot role of a catalog store: one state of the catalog held for
/// a series of reads, so a reader that reads in several steps (a
/// ``CatalogCopy``: schema, hashes, vectors, metadata, events) sees every
/// step from the same moment while other processes write.
///
/// SQLite holds one read transaction on its own connection (WAL: writers go
/// on, and the log cannot be checkpointed past the snapshot until it ends);
/// PostgreSQL one `REPEATABLE READ READ ONLY` transaction on one connection.
///
/// ```swift
/// let summary = try await snapshots.withSnapshot { snapshot in
///     try await CatalogCopy(from: snapshot, to: target).run()
/// }
/// ```
public protocol CatalogSnapshots: Sendable {
    /// Runs `body` with a store that reads the catalog as it was when the
    /// snapshot was taken; writes through it are refused
    /// (``CatalogStoreError/readOnlySnapshot(location:)``). The snapshot ends when `body` returns.
    func withSnapshot<T: Sendable>(_ body: @escaping @Sendable (any CatalogStore & CollectorStore) async throws(CatalogStoreError) -> T)
        async throws(CatalogStoreError) -> T
}
