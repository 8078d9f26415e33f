import Foundation
import GRDB
import TestSupport
import Testing

/// `vsearch catalog backup`, run as an operator would: while `vsearch index`
/// writes, over an existing file, from a damaged catalog, and on PostgreSQL
/// through pg_dump; and `catalog migrate` from a catalog being written.
@Suite("vsearch catalog backup", .serialized, .timeLimit(.minutes(10)))
struct CatalogBackupCLITests {
    typealias CLI = CLITests

    static func json(_ run: CLI.Run) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.stdout) \(run.stderr)")
    }

    static func leftovers(in folder: String) -> [String] {
        CLI.files(under: folder).filter { $0.contains(".partial-") }
    }

    @Test("backups taken while `vsearch index` writes each pass the integrity check, open, and answer a search")
    func whileIndexing() async throws {
        let (folder, count) = try EngineCLITests.largeFolder()
        let catalog = EngineCLITests.catalogPath()
        try await EngineCLITests.indexCorpus(catalog)
        let backups = CLI.temporaryDirectory()
        let (copies, writer) = try await CLI.withRunning(["index", folder, "--catalog", catalog, "--batch-size", "2", "--jobs", "1"]) { writer in
            _ = try await writer.line { $0.hasPrefix("committed ") }  // the index is writing now
            var copies: [(path: String, images: Int, overlapped: Bool)] = []
            for round in 0..<3 {
                let path = "\(backups)/copy\(round).sqlite"
                let run = try await CLI.run(["catalog", "backup", path, "--catalog", catalog, "--json"])
                #expect(run.status == 0, "round \(round): \(run.stderr)")
                let report = try Self.json(run)
                #expect(report["integrity"] as? String == "ok" && report["format"] as? String == "sqlite")
                copies.append((path, report["images"] as? Int ?? -1, !writer.hasEnded))
            }
            return copies
        }
        #expect(writer.status == 0, "\(writer.stderr)")
        #expect(copies.contains { $0.overlapped }, "no backup ran while the index was writing")
        for copy in copies {
            #expect(copy.images >= 102 && copy.images <= 102 + count, "\(copy.images) images")
            let stats = try await CLI.run(["catalog", "stats", "--catalog", copy.path, "--json"])
            let report = try Self.json(stats)
            #expect(report["integrity"] as? String == "ok" && report["images"] as? Int == copy.images)
            let similar = try await CLI.run(["similar", "astronaut", "--catalog", copy.path, "--json", "--limit", "3"])
            #expect(similar.status == 0 && similar.stdout.contains("\"im_name\" : \"astronaut\""), "\(similar.stderr)")
        }
        #expect(Self.leftovers(in: backups).isEmpty)
        #expect(copies.map(\.images) == copies.map(\.images).sorted())
    }

    @Test("an existing DEST is refused without --force (exit 64) and left as it was; --force replaces it")
    func existingDestination() async throws {
        let catalog = EngineCLITests.catalogPath()
        try await EngineCLITests.indexCorpus(catalog)
        let destination = CLI.temporaryDirectory() + "/backup.sqlite"
        try Data("precious".utf8).write(to: URL(fileURLWithPath: destination))
        let refused = try await CLI.run(["catalog", "backup", destination, "--catalog", catalog])
        #expect(refused.status == 64)
        #expect(refused.stderr.contains(destination) && refused.stderr.contains("--force"), "\(refused.stderr)")
        #expect(try String(contentsOfFile: destination, encoding: .utf8) == "precious")

        let forced = try await CLI.run(["catalog", "backup", destination, "--catalog", catalog, "--force"])
        #expect(forced.status == 0, "\(forced.stderr)")
        #expect(forced.stdout.contains("check: ok") && forced.stdout.contains("restore: vsearch serve --catalog \(destination)"))
        let stats = try Self.json(try await CLI.run(["catalog", "stats", "--catalog", destination, "--json"]))
        #expect(stats["images"] as? Int == 102)
        let itself = try await CLI.run(["catalog", "backup", catalog, "--catalog", catalog, "--force"])
        #expect(itself.status == 64 && itself.stderr.contains("the catalog itself"), "\(itself.stderr)")
    }

    @Test("a backup whose copy fails its integrity check exits 74 naming it, and leaves no DEST and no partial file")
    func failedBackupLeavesNothing() async throws {
        let catalog = EngineCLITests.catalogPath()
        try await EngineCLITests.indexCorpus(catalog)
        // Damage the images table's root page: the catalog still opens (its schema and migrations are intact),
        // SQLite's backup copies the pages as they are, and the copy's integrity check finds the damage.
        let (pageSize, root) = try await DatabaseQueue(path: catalog).read { db in
            (try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4096, try Int.fetchOne(db, sql: "SELECT rootpage FROM sqlite_master WHERE name = 'images'") ?? 0)
        }
        #expect(root > 1)
        let file = try FileHandle(forWritingTo: URL(fileURLWithPath: catalog))
        try file.seek(toOffset: UInt64((root - 1) * pageSize + 8))
        try file.write(contentsOf: Data(repeating: 0xA5, count: 64))
        try file.close()

        let folder = CLI.temporaryDirectory()
        let destination = folder + "/backup.sqlite"
        let run = try await CLI.run(["catalog", "backup", destination, "--catalog", catalog])
        #expect(run.status == 74, "\(run.stdout) \(run.stderr)")
        #expect(run.stderr.contains("integrity check") && run.stderr.contains(destination), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: destination))
        #expect(CLI.files(under: folder).isEmpty, "left behind: \(CLI.files(under: folder))")
    }

    @Test("catalog migrate from a catalog being indexed copies one snapshot: the copy verifies and its count is one the source had")
    func migrateWhileIndexing() async throws {
        let (folder, _) = try EngineCLITests.largeFolder()
        let catalog = EngineCLITests.catalogPath()
        try await EngineCLITests.indexCorpus(catalog)
        let target = CLI.temporaryDirectory() + "/migrated.sqlite"
        let (migrated, writer) = try await CLI.withRunning(["index", folder, "--catalog", catalog, "--batch-size", "2", "--jobs", "1"]) { writer in
            _ = try await writer.line { $0.hasPrefix("committed ") }
            let run = try await CLI.run(["catalog", "migrate", catalog, target, "--json"])
            return (run, !writer.hasEnded)
        }
        #expect(writer.status == 0, "\(writer.stderr)")
        let (run, overlapped) = migrated
        #expect(run.status == 0, "the copy verifies against its snapshot: \(run.stderr)")
        #expect(overlapped, "the migrate ended after the index: it did not read a catalog being written")
        let summary = try Self.json(run)
        let images = summary["images"] as? Int ?? -1
        // The index commits two images a batch on top of the corpus's 102: a snapshot holds 102 + an even number.
        #expect(images >= 102 && (images - 102) % 2 == 0, "\(images) images")
        let stats = try Self.json(try await CLI.run(["catalog", "stats", "--catalog", target, "--json"]))
        #expect(stats["images"] as? Int == images && stats["integrity"] as? String == "ok")
    }

    /// Device and inode of a file (following links), nil when it is not there.
    static func identity(_ path: String) -> [Int]? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else { return nil }
        return [attributes[.systemNumber] as? Int ?? -1, attributes[.systemFileNumber] as? Int ?? -1]
    }

    @Test("while a server runs on the catalog, DEST is never one of the catalog's own files, whatever the spelling (-wal, -shm, -journal, relative, .., symbolic links — dangling too — hard links, the HNSW folder): each is refused with 64 naming DEST and what it is, even with --force; the catalog stays whole")
    func catalogOwnFilesRefused() async throws {
        let catalog = EngineCLITests.catalogPath()
        try await EngineCLITests.indexCorpus(catalog)
        let hnsw = try await CLI.run(["catalog", "hnsw", "--catalog", catalog])
        #expect(hnsw.status == 0, "\(hnsw.stderr)")
        let folder = (catalog as NSString).deletingLastPathComponent
        let graph = try #require(try FileManager.default.contentsOfDirectory(atPath: catalog + ".hnsw").first { $0.hasSuffix(".graph") })
        let elsewhere = CLI.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: folder + "/sub", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: elsewhere + "/to-wal", withDestinationPath: catalog + "-wal")
        try FileManager.default.createSymbolicLink(atPath: elsewhere + "/to-catalog", withDestinationPath: "../" + (folder as NSString).lastPathComponent + "/catalog.sqlite")
        try FileManager.default.createSymbolicLink(atPath: elsewhere + "/to-journal", withDestinationPath: catalog + "-journal")  // dangling: WAL mode has none
        try FileManager.default.createSymbolicLink(atPath: elsewhere + "/to-index", withDestinationPath: catalog + ".hnsw")
        try FileManager.default.linkItem(atPath: catalog, toPath: elsewhere + "/hard.sqlite")
        try FileManager.default.linkItem(atPath: catalog + ".hnsw/" + graph, toPath: elsewhere + "/hard.graph")

        // (DEST, working directory, what the message names)
        let spellings: [(String, String?, String)] = [
            (catalog, nil, "the catalog itself"),
            (catalog + "-wal", nil, "write-ahead log"),
            (catalog + "-shm", nil, "shared-memory"),
            (catalog + "-journal", nil, "rollback journal"),
            ("catalog.sqlite-wal", folder, "write-ahead log"),
            ("./sub/../catalog.sqlite-shm", folder, "shared-memory"),
            (folder + "/sub/../catalog.sqlite-wal", nil, "write-ahead log"),
            (folder + "//./catalog.sqlite", nil, "the catalog itself"),
            (elsewhere + "/to-wal", nil, "points at"),
            (elsewhere + "/to-catalog", nil, "points at"),
            (elsewhere + "/to-journal", nil, "points at"),
            (elsewhere + "/hard.sqlite", nil, "hard link"),
            (elsewhere + "/hard.graph", nil, "hard link"),
            (catalog + ".hnsw/color.json", nil, "HNSW index"),
            (catalog + ".hnsw/new/backup.sqlite", nil, "HNSW index"),
            (elsewhere + "/to-index/backup.sqlite", nil, "HNSW index"),
        ]
        let server = ["serve", "--catalog", catalog, "--port", "0", "--no-web-page"]
        let before = Self.identity(catalog)
        let (runs, _) = try await CLI.withRunning(server) { child in
            _ = try await child.line { $0.contains("listening on http://") }
            #expect(FileManager.default.fileExists(atPath: catalog + "-wal"), "the server holds the catalog open in WAL mode")
            var runs: [(String, CLI.Run)] = []
            for (destination, directory, _) in spellings {
                runs.append((destination, try await CLI.run(["catalog", "backup", destination, "--catalog", catalog, "--force"], directory: directory)))
            }
            child.signal(SIGTERM)
            return runs
        }
        for ((destination, run), (_, _, names)) in zip(runs, spellings) {
            #expect(run.status == 64, "\(destination): \(run.status) \(run.stderr)")
            #expect(run.stderr.contains(destination) && run.stderr.contains(names), "\(destination): \(run.stderr)")
            #expect(!run.stderr.contains("exists; pass"), "\(destination): not refused as merely existing: \(run.stderr)")
        }
        #expect(Self.identity(catalog) == before, "the catalog file was not replaced")
        #expect(!FileManager.default.fileExists(atPath: catalog + ".hnsw/new"))
        #expect(Self.leftovers(in: folder).isEmpty && Self.leftovers(in: elsewhere).isEmpty)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: elsewhere + "/to-wal") == catalog + "-wal", "links left as they were")
        let stats = try Self.json(try await CLI.run(["catalog", "stats", "--catalog", catalog, "--json"]))
        #expect(stats["integrity"] as? String == "ok" && stats["images"] as? Int == 102, "\(stats)")
        let loaded = try await CLI.run(["catalog", "hnsw", "--catalog", catalog, "--json"])
        #expect(loaded.status == 0 && loaded.stdout.contains("\"loaded\" : true"), "the index is whole: \(loaded.stdout) \(loaded.stderr)")
        // A file of its own beside them is still fine.
        let fine = try await CLI.run(["catalog", "backup", folder + "/sub/copy.sqlite", "--catalog", catalog])
        #expect(fine.status == 0, "\(fine.stderr)")
    }

    @Test("--help says how to restore, for SQLite and PostgreSQL")
    func help() async throws {
        let run = try await CLI.run(["catalog", "backup", "--help"])
        #expect(run.status == 0)
        #expect(run.stdout.contains("vsearch serve --catalog DEST") && run.stdout.contains("pg_restore") && run.stdout.contains("--force"))
    }
}

/// `vsearch catalog backup` of a PostgreSQL catalog: pg_dump's archive, restored into a new database.
@Suite("vsearch catalog backup on PostgreSQL", .serialized, .enabled(if: PostgreSQLTestDatabase.isRequired), .timeLimit(.minutes(10)))
struct CatalogBackupPostgreSQLCLITests {
    typealias CLI = CLITests

    /// The server's own pg_dump (the system's may be older than the server, which pg_dump refuses).
    static func environment() throws -> [String: String] {
        ["VSEARCH_PG_DUMP": try PostgreSQLTestDatabase.clientProgram("pg_dump")]
    }

    @Test("pg_dump's archive checks, restores into a new database as README says, and answers the same; the password is never printed")
    func backupAndRestore() async throws {
        let fresh = try PostgreSQLTestDatabase.freshURL()
        // With a password in the URL (the test server trusts loopback, so any works): never printed.
        let catalog = fresh.replacingOccurrences(of: "postgresql://postgres@", with: "postgresql://postgres:pw-Secret-42@")
        #expect(catalog != fresh)
        let indexed = try await PostgreSQLCLITests.index(catalog)
        #expect(indexed.status == 0, "\(indexed.stderr)")
        let destination = CLI.temporaryDirectory() + "/shop.dump"
        let run = try await CLI.run(["catalog", "backup", destination, "--catalog", catalog, "--json"], environment: try Self.environment())
        #expect(run.status == 0, "\(run.stderr)")
        #expect(!(run.stdout + run.stderr).contains("pw-Secret-42"))
        let report = try CatalogBackupCLITests.json(run)
        #expect(report["format"] as? String == "pg_dump-custom" && report["integrity"] as? String == "ok")
        #expect((report["restore"] as? String)?.contains("pg_restore") == true)

        let restored = try await PostgreSQLTestDatabase.restoreIntoNewDatabase(destination, catalogURL: fresh)
        let stats = try CatalogBackupCLITests.json(try await CLI.run(["catalog", "stats", "--catalog", restored, "--json"]))
        #expect(stats["images"] as? Int == 102 && stats["integrity"] as? String == "ok")
        let original = try await CLI.run(["similar", "chelsea_cat", "--catalog", fresh, "--json", "--limit", "5"])
        let copy = try await CLI.run(["similar", "chelsea_cat", "--catalog", restored, "--json", "--limit", "5"])
        #expect(copy.status == 0, "\(copy.stderr)")
        #expect(try PostgreSQLCLITests.answer(original) == PostgreSQLCLITests.answer(copy))
        await PostgreSQLTestDatabase.dropDatabase(of: restored)
    }

    @Test("without pg_dump: exit 69 naming pg_dump and how to get it; a pg_dump that fails half-way leaves no DEST (exit 74)")
    func missingOrFailingPgDump() async throws {
        let catalog = try PostgreSQLTestDatabase.freshURL()
        #expect(try await PostgreSQLCLITests.index(catalog).status == 0)
        let folder = CLI.temporaryDirectory()
        let destination = folder + "/shop.dump"

        let missing = try await CLI.run(["catalog", "backup", destination, "--catalog", catalog], environment: ["VSEARCH_PG_DUMP": folder + "/no-pg_dump"])
        #expect(missing.status == 69, "\(missing.stderr)")
        #expect(missing.stderr.contains("pg_dump") && missing.stderr.contains("postgresql-client") && missing.stderr.contains("VSEARCH_PG_DUMP"))

        // A pg_dump that writes part of an archive and then fails (as one that loses its connection would).
        let fake = folder + "/pg_dump"
        try """
            #!/bin/sh
            for argument in "$@"; do case "$argument" in --file=*) printf 'PGDMP half' > "${argument#--file=}";; esac; done
            echo 'pg_dump: error: connection to server lost' >&2
            exit 1
            """.write(toFile: fake, atomically: true, encoding: .utf8)
        chmod(fake, 0o755)
        let failed = try await CLI.run(["catalog", "backup", destination, "--catalog", catalog], environment: ["VSEARCH_PG_DUMP": fake])
        #expect(failed.status == 74, "\(failed.stderr)")
        #expect(failed.stderr.contains("connection to server lost"))
        #expect(CLI.files(under: folder) == ["pg_dump"], "only the fake program is left: \(CLI.files(under: folder))")
    }
}
