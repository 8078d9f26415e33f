import TestSupport
import Testing

/// TestSupport's `InMemoryCatalogStore`, the store the engine's tests run on,
/// keeps the catalog roles' contracts (it keeps no events and has no
/// location: the collector, backup and snapshot contracts are the databases').
@Suite("in-memory store conformance", .timeLimit(.minutes(10)))
struct InMemoryConformanceTests {
    @Test("the CatalogReader contract", arguments: CatalogReaderConformance.checks.applying(to: .inMemory))
    func catalogReader(_ check: ConformanceCheck) async throws {
        try await check.run(on: .inMemory)
    }

    @Test("the CatalogWriter contract", arguments: CatalogWriterConformance.checks.applying(to: .inMemory))
    func catalogWriter(_ check: ConformanceCheck) async throws {
        try await check.run(on: .inMemory)
    }

    @Test("the CatalogAdmin contract", arguments: CatalogAdminConformance.checks.applying(to: .inMemory))
    func catalogAdmin(_ check: ConformanceCheck) async throws {
        try await check.run(on: .inMemory)
    }

    @Test("the InsertJournal contract", arguments: InsertJournalConformance.checks.applying(to: .inMemory))
    func insertJournal(_ check: ConformanceCheck) async throws {
        try await check.run(on: .inMemory)
    }
}
