import ConcurrencyToolkit
import GRDB
import SearchEngine
import Tracking
import VisualSearch

/// The snapshot role: one read transaction on a connection of its own
/// (GRDB's `DatabaseSnapshot`), so every read of `body` sees the catalog as
/// it was when the snapshot began. Writers in this and other processes go
/// on meanwhile (WAL); the log is not checkpointed past the snapshot until it ends.
extension SQLiteCatalogStore: CatalogSnapshots {
    public func withSnapshot<T: Sendable>(_ body: @escaping @Sendable (any CatalogStore & CollectorStore) async throws(CatalogStoreError) -> T)
        async throws(CatalogStoreError) -> T {
        let pool = self.pool
        let snapshot: DatabaseSnapshot
        do { snapshot = try await OwnThread.run(named: "vsearch-sqlite") { try pool.makeSnapshot() } } catch { throw Self.wrap(error) }
        let store = SQLiteCatalogStore(path: path, pool: pool, snapshot: snapshot)
        let value = try await body(store)
        try? await OwnThread.run(named: "vsearch-sqlite") { try snapshot.close() }
        return value
    }
}
