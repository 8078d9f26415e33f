import PostgresNIO
import SearchEngine
import Tracking
import VisualSearch

/// The snapshot role: one connection of the pool held in a
/// `REPEATABLE READ READ ONLY` transaction for the whole of `body`, every
/// read of the snapshot's store on it: each statement sees the database as
/// the transaction's first one did, whatever other sessions commit meanwhile.
extension PostgreSQLCatalogStore: CatalogSnapshots {
    public func withSnapshot<T: Sendable>(_ body: @escaping @Sendable (any CatalogStore & CollectorStore) async throws(CatalogStoreError) -> T)
        async throws(CatalogStoreError) -> T {
        if pinned != nil { return try await body(self) }
        let store = self
        return try await withConnection { connection in
            try await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: Self.silent)
            // The transaction's snapshot is taken by its first statement: now, not at the snapshot's first read.
            try await connection.query("SELECT 1", logger: Self.silent)
            let snapshot = PostgreSQLCatalogStore(snapshotOf: store, connection: connection)
            do {
                let value = try await body(snapshot)
                try await connection.query("COMMIT", logger: Self.silent)
                return value
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: Self.silent)
                throw error
            }
        }
    }
}
