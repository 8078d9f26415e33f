import CatalogStores
import Foundation
import SearchEngine
import Testing
import Tracking
import VisualSearch

/// The ``CatalogBackup`` contract, on every store that offers it (opened as
/// `vsearch` opens a catalog): the copy holds one whole state of the catalog,
/// restores to the same catalog, appears whole or not at all, and replaces
/// an existing file only when asked.
public enum CatalogBackupConformance {
    /// PostgreSQL backups run the server's own pg_dump (the wheel scripts/postgres.sh
    /// installs): the system's may be older than the server, which pg_dump refuses.
    static let programs: Void = {
        if let dump = try? PostgreSQLTestDatabase.clientProgram("pg_dump") { setenv("VSEARCH_PG_DUMP", dump, 1) }
    }()

    /// Runs `body` with a catalog at a fresh location holding ``ConformanceSample/sample`` and three events, open for `body`'s length.
    static func withSeeded(_ factory: LocationFactory, _ body: (_ location: String, _ opened: OpenedCatalog) async throws -> Void) async throws {
        _ = programs
        let location = try factory.make()
        try await CatalogLocation(parsing: location).withCatalog(creating: true) { opened in
            try await opened.store.declare(ConformanceSample.schema)
            try await opened.store.upsert(ConformanceSample.sample, schema: ConformanceSample.schema)
            _ = try await opened.store.receive([click(1), click(2), click(3)])
            try await body(location, opened)
        }
    }

    /// Runs `body` with the copy as a catalog: a SQLite copy opened as it is; a PostgreSQL archive restored into a new database.
    static func withRestored(_ report: BackupReport, of location: String, _ body: (OpenedCatalog) async throws -> Void) async throws {
        switch report.format {
        case .sqlite:
            try await CatalogLocation(parsing: report.destination).withCatalog(body)
        case .pgDumpCustom:
            let url = try await PostgreSQLTestDatabase.restoreIntoNewDatabase(report.destination, catalogURL: location)
            try await CatalogLocation(parsing: url).withCatalog(body)
        }
    }

    /// Files beside `path` whose names say they are a backup's temporary copy.
    static func leftovers(beside path: String) -> [String] {
        let folder = (path as NSString).deletingLastPathComponent
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.contains(".partial-") }
    }

    /// Every check of the contract, each naming the stores it applies to.
    public static var checks: [ConformanceCheck] {
        var checks: [ConformanceCheck] = []
        checks.append(ConformanceCheck("the copy checks ok and, restored, is the same catalog: fields, images, vectors, metadata, events", stores: [.sqlite, .postgreSQL]) { kind in
            let factory = LocationFactory(kind)
            try await Self.withSeeded(factory) { location, opened async throws in
                let destination = Repository.temporaryDirectory("backup") + "/nested/folder/catalog.backup"
                let report = try await #require(opened.backup).backup(to: destination, replacing: false) { _ in }
                #expect(report.integrity == "ok")
                #expect(report.bytes > 0 && report.bytes == BackupDestination.size(of: destination))
                #expect(report.destination == destination && report.source == opened.store.location)
                #expect(Self.leftovers(beside: destination).isEmpty)

                try await Self.withRestored(report, of: location) { copy async throws in
                    let original = opened.store
                    #expect(try await copy.store.schema() == original.schema())
                    #expect(try await copy.store.contentHashes() == original.contentHashes())
                    #expect(try await copy.store.export() == original.export())
                    let (copied, source) = (try await copy.store.loadIndex(learned: .exact), try await original.loadIndex(learned: .exact))
                    #expect(copied.names == source.names)
                    #expect((0..<source.count).allSatisfy { copied.vector(at: $0) == source.vector(at: $0) && copied.palettes[$0] == source.palettes[$0] })
                    #expect(try await copy.store.eventCount() == 3)
                    #expect(try await copy.store.integrityCheck() == "ok")
                    if let images = report.images { #expect(images == ConformanceSample.sample.count) }
                    await PostgreSQLTestDatabase.dropDatabase(of: copy.store.location)
                }
            }
        })
        checks.append(ConformanceCheck("an existing destination is kept unless replacing is asked; replacing swaps in a whole copy", stores: [.sqlite, .postgreSQL]) { kind in
            let factory = LocationFactory(kind)
            try await Self.withSeeded(factory) { _, opened async throws in
                let backup = try #require(opened.backup)
                let destination = Repository.temporaryDirectory("backup") + "/catalog.backup"
                try Data("keep me".utf8).write(to: URL(fileURLWithPath: destination))
                await #expect(throws: BackupError.destinationExists(path: destination)) {
                    try await backup.backup(to: destination, replacing: false) { _ in }
                }
                #expect(try String(contentsOfFile: destination, encoding: .utf8) == "keep me")
                let report = try await backup.backup(to: destination, replacing: true) { _ in }
                #expect(report.integrity == "ok" && BackupDestination.size(of: destination) == report.bytes)
                let head = try FileHandle(forReadingFrom: URL(fileURLWithPath: destination)).readData(ofLength: 16)
                #expect(head.starts(with: Data(report.format == .sqlite ? "SQLite format 3".utf8 : "PGDMP".utf8)))
                #expect(Self.leftovers(beside: destination).isEmpty)
            }
        })
        checks.append(ConformanceCheck("backups taken while another connection commits batches of ten hold whole batches only", stores: [.sqlite, .postgreSQL]) { kind in
            let factory = LocationFactory(kind)
            try await Self.withSeeded(factory) { location, opened async throws in
                try await CatalogLocation(parsing: location).withCatalog { another async throws in
                    let writer = another.store
                    let batches = 30
                    let writing = Task {
                        for batch in 0..<batches {
                            let items = (0..<10).map { Items.item("w\(batch)-\($0)", seed: 100 + batch * 10 + $0, metadata: ["brand": "w"]) }
                            try await writer.upsert(items, schema: ConformanceSample.schema)
                        }
                    }
                    var counts: [Int] = []
                    let folder = Repository.temporaryDirectory("backup")
                    for round in 0..<4 {
                        let report = try await #require(opened.backup).backup(to: "\(folder)/copy\(round)", replacing: false) { _ in }
                        #expect(report.integrity == "ok")
                        try await Self.withRestored(report, of: location) { copy async throws in
                            let count = try await copy.store.count()
                            #expect(try await copy.store.integrityCheck() == "ok")
                            await PostgreSQLTestDatabase.dropDatabase(of: copy.store.location)
                            #expect((count - ConformanceSample.sample.count) % 10 == 0, "round \(round): \(count) images is not the sample plus whole batches")
                            counts.append(count)
                        }
                    }
                    try await writing.value
                    #expect(counts == counts.sorted(), "each later backup holds at least what an earlier one did: \(counts)")
                    #expect(try await opened.store.count() == ConformanceSample.sample.count + batches * 10)
                }
            }
        })
        return checks
    }
}
