import TestSupport
import Testing

/// `SQLiteCatalogStore` keeps every role's contract (TestSupport/Conformance),
/// the collector's and the backup and snapshot roles' included.
@Suite("SQLite store conformance", .timeLimit(.minutes(10)))
struct SQLiteConformanceTests {
    @Test("the CatalogReader contract", arguments: CatalogReaderConformance.checks.applying(to: .sqlite))
    func catalogReader(_ check: ConformanceCheck) async throws {
        try await check.run(on: .sqlite)
    }

    @Test("the CatalogWriter contract", arguments: CatalogWriterConformance.checks.applying(to: .sqlite))
    func catalogWriter(_ check: ConformanceCheck) async throws {
        try await check.run(on: .sqlite)
    }

    @Test("the CatalogAdmin contract", arguments: CatalogAdminConformance.checks.applying(to: .sqlite))
    func catalogAdmin(_ check: ConformanceCheck) async throws {
        try await check.run(on: .sqlite)
    }

    @Test("the InsertJournal contract", arguments: InsertJournalConformance.checks.applying(to: .sqlite))
    func insertJournal(_ check: ConformanceCheck) async throws {
        try await check.run(on: .sqlite)
    }

    @Test("the CollectorStore contract", arguments: CollectorStoreConformance.checks.applying(to: .sqlite))
    func collectorStore(_ check: ConformanceCheck) async throws {
        try await check.run(on: .sqlite)
    }

    @Test("the CatalogBackup contract, opened as vsearch opens it", arguments: CatalogBackupConformance.checks.applying(to: .sqlite))
    func catalogBackup(_ check: ConformanceCheck) async throws {
        try await check.run(on: .sqlite)
    }

    @Test("the CatalogSnapshots contract, opened as vsearch opens it", arguments: CatalogSnapshotsConformance.checks.applying(to: .sqlite))
    func catalogSnapshots(_ check: ConformanceCheck) async throws {
        try await check.run(on: .sqlite)
    }
}
