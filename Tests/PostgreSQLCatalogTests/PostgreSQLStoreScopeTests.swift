import Foundation
import PostgreSQLCatalog
import SearchEngine
import Testing
import TestSupport
import VisualSearch

/// A PostgreSQL store's connection pool belongs to the scope that opened it
/// (`PostgreSQLCatalogStore.withStore`): it runs while the closure runs and is
/// closed when the closure returns or throws — never by a task nobody awaits.
@Suite("PostgreSQL store scope", .enabled(if: PostgreSQLTestDatabase.isRequired), .timeLimit(.minutes(5)))
struct PostgreSQLStoreScopeTests {
    @Test("inside the scope the store answers; once the closure returns, its pool is closed and a call fails as unavailable")
    func poolClosesWithTheScope() async throws {
        let settings = try PostgreSQLTestDatabase.freshSchema()
        let kept = try await PostgreSQLCatalogStore.withStore(settings, creating: true) { store async throws in
            #expect(try await store.count() == 0)
            return store
        }
        await #expect {
            try await kept.count()
        } throws: { error in
            guard case CatalogStoreError.unavailable = error else { return false }
            return true
        }
    }

    @Test("an error thrown in the closure is the one the caller gets, and the pool is closed all the same")
    func bodyErrorPassesThrough() async throws {
        struct Stop: Error, Equatable {}
        let settings = try PostgreSQLTestDatabase.freshSchema()
        var opened: PostgreSQLCatalogStore?
        do {
            try await PostgreSQLCatalogStore.withStore(settings, creating: true) { store async throws in
                opened = store
                throw Stop()
            }
            Issue.record("the closure's error was not thrown")
        } catch {
            #expect(error as? Stop == Stop())
        }
        let store = try #require(opened)
        await #expect(throws: CatalogStoreError.self) { try await store.count() }
    }
}
