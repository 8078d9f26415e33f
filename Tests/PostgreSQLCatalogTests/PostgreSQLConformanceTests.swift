import TestSupport
import Testing

/// `PostgreSQLCatalogStore` keeps every role's contract (TestSupport/Conformance),
/// on the PostgreSQL server `$VSEARCH_TEST_POSTGRES` names (`scripts/test.sh`
/// starts one; in CI a missing server fails these instead of skipping them).
@Suite("PostgreSQL store conformance", .timeLimit(.minutes(10)), .enabled(if: PostgreSQLTestDatabase.isRequired))
struct PostgreSQLConformanceTests {
    @Test("the CatalogReader contract", arguments: CatalogReaderConformance.checks.applying(to: .postgreSQL))
    func catalogReader(_ check: ConformanceCheck) async throws {
        try await check.run(on: .postgreSQL)
    }

    @Test("the CatalogWriter contract", arguments: CatalogWriterConformance.checks.applying(to: .postgreSQL))
    func catalogWriter(_ check: ConformanceCheck) async throws {
        try await check.run(on: .postgreSQL)
    }

    @Test("the CatalogAdmin contract", arguments: CatalogAdminConformance.checks.applying(to: .postgreSQL))
    func catalogAdmin(_ check: ConformanceCheck) async throws {
        try await check.run(on: .postgreSQL)
    }

    @Test("the InsertJournal contract", arguments: InsertJournalConformance.checks.applying(to: .postgreSQL))
    func insertJournal(_ check: ConformanceCheck) async throws {
        try await check.run(on: .postgreSQL)
    }

    @Test("the CollectorStore contract", arguments: CollectorStoreConformance.checks.applying(to: .postgreSQL))
    func collectorStore(_ check: ConformanceCheck) async throws {
        try await check.run(on: .postgreSQL)
    }

    @Test("the CatalogBackup contract, opened as vsearch opens it", arguments: CatalogBackupConformance.checks.applying(to: .postgreSQL))
    func catalogBackup(_ check: ConformanceCheck) async throws {
        try await check.run(on: .postgreSQL)
    }

    @Test("the CatalogSnapshots contract, opened as vsearch opens it", arguments: CatalogSnapshotsConformance.checks.applying(to: .postgreSQL))
    func catalogSnapshots(_ check: ConformanceCheck) async throws {
        try await check.run(on: .postgreSQL)
    }
}
