import VisualSearch

/// The administration role of a catalog store (``CatalogStore``): what an
/// operator asks of the storage itself rather than of the catalog in it.
public protocol CatalogAdmin: CatalogReader {
    /// A health check of the storage: "ok" when healthy, otherwise what the
    /// database reports (SQLite's `PRAGMA integrity_check`, PostgreSQL's own checks).
    func integrityCheck() async throws(CatalogStoreError) -> String
}
