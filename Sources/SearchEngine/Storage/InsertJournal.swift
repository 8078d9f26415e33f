import VisualSearch

/// Where data API insert transactions keep their progress (a role of
/// ``CatalogStore``), so any process on the catalog — another server replica,
/// this one after a restart — answers `/insert/status`.
public protocol InsertJournal: Sendable {
    /// Saves a transaction's progress, replacing its earlier state. The most
    /// recent ``InsertStatusResponse/Progress/transactionsKept`` transactions are kept.
    func saveInsertTransaction(_ progress: InsertStatusResponse.Progress) async throws(CatalogStoreError)
    /// A transaction's last saved progress; nil for an unknown id.
    func insertTransaction(_ id: String) async throws(CatalogStoreError) -> InsertStatusResponse.Progress?
}

extension InsertStatusResponse.Progress {
    /// How many insert transactions a store keeps for `/insert/status`.
    public static let transactionsKept = 1000
}
