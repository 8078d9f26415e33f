import Foundation
import SearchEngine
import Testing
import TestSupport
import VisualSearch
import VisualSearchServer
import CatalogStores
import PostgreSQLCatalog

/// `vsearch serve` on a PostgreSQL catalog while the database stops and
/// starts again: 503 meanwhile, the process stays up, and it recovers by itself.
@Suite("Serving through a PostgreSQL restart", .serialized, .enabled(if: PostgreSQLTestDatabase.isRequired), .timeLimit(.minutes(10)))
struct PostgreSQLRestartTests {
    @Test("requests answer 503 while PostgreSQL is down and 200 again once it is back, with no restart of the server")
    func restart() async throws {
        let database = try await PrivatePostgreSQLServer.start()
        // Setting up on a loaded CI machine may wait long for a connection; the server's
        // own timeout bounds how long a request waits while the database is down.
        let url = database.url + "?connect_timeout=10"
        try await PostgreSQLCatalogStore.withStore(try PostgreSQLSettings(url: database.url + "?connect_timeout=60"), creating: true) { store async throws in
            _ = try await Indexer(store: store).run(directory: Repository.images, metadata: try MetadataTable(contentsOf: Repository.metadata))
        }

        let running = try await ServerFixture.live { $0.catalog = CatalogLocation(parsing: url) }
        let search = running.url.appendingPathComponent("search").absoluteString + "?im_name=chelsea_cat&limit=3"
        func status() async -> Int { (try? await ServerFixture.raw(URL(string: search)!).status) ?? -1 }
        do {
            #expect(await status() == 200)
            try await database.stop()
            let down = await status()
            #expect(down == 503, "while the database is down: \(down)")
            let body = try await ServerFixture.raw(URL(string: search)!)
            #expect("\(body.json)".contains("Catalog unavailable"), "\(body.json)")
            try await database.restart()
            // `pg_ctl start -w` returns once the server accepts connections; a request waits for the pool's
            // reconnection (up to connect_timeout), so a few tries, back to back, are enough.
            var recovered = false
            for _ in 0..<5 where !recovered { recovered = await status() == 200 }
            #expect(recovered, "the server did not recover after PostgreSQL came back")
        } catch {
            Issue.record(error)
        }
        await running.stop()
        await database.remove()
    }
}
