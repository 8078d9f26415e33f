import Foundation
import SearchEngine
import TestSupport
import Testing
import Tracking
import VisualSearch
import CatalogStores
import SQLiteCatalog

/// What only the SQLite store does: files, folders, foreign and corrupt
/// files, its migrations. The contract it shares with every store is in
/// ``CatalogStoreConformanceTests`` and ``CollectorStoreConformanceTests``.
@Suite("SQLiteCatalogStore", .timeLimit(.minutes(10)))
struct SQLiteCatalogStoreTests {
    @Test("creating makes the catalog and its folders; it reopens with what was written")
    func createAndReopen() async throws {
        let path = Repository.temporaryDirectory("sqlite") + "/nested/dir/catalog.sqlite"
        do {
            let store = try await SQLiteCatalogStore(path: path, creating: true)
            #expect(store.location == path)
            #expect(try await store.count() == 0)
            #expect(try await store.integrityCheck() == "ok")
            try await store.declare(FieldSchema(fields: ["brand": .string]))
            try await store.upsert([Items.item("a", metadata: ["brand": "x"])], schema: FieldSchema(fields: ["brand": .string]))
        }
        #expect(FileManager.default.fileExists(atPath: path))
        let reopened = try await SQLiteCatalogStore(path: path)
        #expect(try await reopened.count() == 1)
        #expect(try await reopened.schema().fields == ["brand": .string])
    }

    @Test("without creating, a missing catalog is catalogNotFound and no file appears")
    func missing() async throws {
        let path = Repository.temporaryDirectory("sqlite") + "/absent/catalog.sqlite"
        await #expect(throws: CatalogStoreError.notFound(location: path)) { try await SQLiteCatalogStore(path: path) }
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(!FileManager.default.fileExists(atPath: (path as NSString).deletingLastPathComponent))
    }

    @Test("a foreign SQLite file is refused, naming the path, and left byte for byte as it was", .enabled(if: hasSQLiteTool))
    func foreign() async throws {
        let path = Repository.temporaryDirectory("sqlite") + "/other.sqlite"
        try await run("sqlite3", [path, "CREATE TABLE t(x); INSERT INTO t VALUES (42);"])
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        await #expect {
            try await SQLiteCatalogStore(path: path)
        } throws: { error in
            guard case CatalogStoreError.unusable(let location, let reason) = error else { return false }
            return location == path && reason.contains("not a vsearch catalog")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }

    @Test("a corrupt file is a catalog error naming the path, not a crash; it is not overwritten")
    func corrupt() async throws {
        let path = Repository.temporaryDirectory("sqlite") + "/corrupt.sqlite"
        let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) })
        try garbage.write(to: URL(fileURLWithPath: path))
        for creating in [false, true] {
            await #expect {
                try await SQLiteCatalogStore(path: path, creating: creating)
            } throws: { error in
                guard case CatalogStoreError.unusable(let location, _) = error else { return false }
                return location == path && "\(error)".contains(path)
            }
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == garbage)
    }

    @Test("an empty file becomes a catalog when opened", arguments: [false, true])
    func emptyFile(creating: Bool) async throws {
        let path = Repository.temporaryDirectory("sqlite") + "/empty.sqlite"
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        let store = try await SQLiteCatalogStore(path: path, creating: creating)
        #expect(try await store.count() == 0)
        #expect(try await store.integrityCheck() == "ok")
    }

    @Test("the file is marked with vsearch's application id", .enabled(if: hasSQLiteTool))
    func applicationID() async throws {
        let path = Repository.temporaryDirectory("sqlite") + "/catalog.sqlite"
        _ = try await SQLiteCatalogStore(path: path, creating: true)
        #expect(try await run("sqlite3", [path, "PRAGMA application_id;"]) == String(SQLiteCatalogStore.applicationID))
    }

    @Test("a catalog from before the collector migration keeps its events and loses the collector's old migration table",
          .enabled(if: hasSQLiteTool))
    func collectorMigration() async throws {
        let path = Repository.temporaryDirectory("sqlite") + "/catalog.sqlite"
        do {
            let store = try await SQLiteCatalogStore(path: path, creating: true)
            _ = try await store.receive([.productClick(queryId: "q", pid: "p", imgUrl: "https://shop.example/p.jpg", pos: 1)])
            try await store.upsert([Items.item("a")], schema: FieldSchema())
        }
        // Make it look like a catalog written before "v2: collector events",
        // when the collector kept its own migration record in the same file.
        try await run("sqlite3", [path, """
            DELETE FROM grdb_migrations WHERE identifier = 'v2: collector events';
            CREATE TABLE tracking_migrations (identifier TEXT PRIMARY KEY);
            INSERT INTO tracking_migrations VALUES ('v1: events');
            """])
        #expect(try await run("sqlite3", [path, "SELECT COUNT(*) FROM tracking_migrations;"]) == "1")

        let reopened = try await SQLiteCatalogStore(path: path)
        #expect(try await reopened.eventCount() == 1)
        #expect(try await reopened.count() == 1)
        #expect(try await run("sqlite3", [path, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'tracking_migrations';"]) == "0")
        #expect(try await run("sqlite3", [path, "SELECT identifier FROM grdb_migrations ORDER BY identifier;"])
            == "v1: images, fields, values, full-text\nv2: collector events\nv3: insert transactions\nv4: learned vectors\nv5: covering indexes for event stats\nv6: image changes\nv7: covering index for content hashes")
        #expect(try await run("sqlite3", [path, "PRAGMA application_id;"]) == String(SQLiteCatalogStore.applicationID))
        // Opening again applies nothing twice.
        _ = try await SQLiteCatalogStore(path: path)
        #expect(try await reopened.eventCount() == 1)
    }

    @Test("CatalogLocation opens SQLite paths and PostgreSQL URLs; an unreachable server is unavailable, and no message holds the password")
    func location() async throws {
        let path = Repository.temporaryDirectory("sqlite") + "/catalog.sqlite"
        #expect(CatalogLocation(parsing: path) == .sqlite(path: path))
        await #expect(throws: CatalogStoreError.notFound(location: path)) { try await CatalogLocation(parsing: path).withCatalog { _ in } }
        #expect(try await CatalogLocation(parsing: path).withCatalog(creating: true) { $0.store.location } == path)

        // Port 1 on loopback: nothing listens there.
        let postgres = CatalogLocation(parsing: "postgresql://shop:s3cret@127.0.0.1:1/catalog?connect_timeout=1")
        guard case .postgreSQL = postgres else {
            Issue.record("\(postgres) is not a PostgreSQL location")
            return
        }
        #expect(postgres.description == "postgresql://shop@127.0.0.1:1/catalog")
        await #expect {
            try await postgres.withCatalog { _ in Issue.record("an unreachable server was opened") }
        } throws: { error in
            guard case CatalogStoreError.unavailable(let location, _) = error else { return false }
            return location == "postgresql://shop@127.0.0.1:1/catalog" && !"\(error)".contains("s3cret")
        }
        #expect(CatalogLocation.fromEnvironment(["VSEARCH_CATALOG": path]) == .sqlite(path: path))
        #expect(CatalogLocation.fromEnvironment([:]) == .sqlite(path: CatalogLocation.defaultPath))
        #expect(CatalogLocation.fromEnvironment(["VSEARCH_CATALOG": ""]) == .sqlite(path: CatalogLocation.defaultPath))
    }
}
