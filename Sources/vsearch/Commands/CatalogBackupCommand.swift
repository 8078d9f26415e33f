import ArgumentParser
import CatalogStores
import Foundation
import SearchEngine
import ConcurrencyToolkit
import VisualSearch

extension CatalogCommand {
    /// `vsearch catalog backup DEST`: a consistent copy of a live catalog.
    struct Backup: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Copy the catalog to a file while it is in use, then check the copy.",
            discussion: """
                The copy is one state of the catalog, taken while `vsearch serve` and `vsearch index` go on \
                reading and writing it: every change committed before the backup began, nothing half done. \
                It is written beside DEST under a temporary name, checked, synced to disk and only then \
                renamed to DEST, so DEST is whole or absent — a failed or interrupted backup never leaves \
                a partial DEST. An existing DEST is refused unless --force.

                SQLite catalog: SQLite's online backup API, then PRAGMA integrity_check on the copy. \
                The copy is a catalog; to restore, use it (or copy it back while nothing runs):
                  vsearch serve --catalog DEST

                PostgreSQL catalog (postgresql://…): pg_dump of the catalog's schema in its custom format, \
                then pg_restore --list reads the archive back. pg_dump comes from $VSEARCH_PG_DUMP, else PATH, \
                and must be of the server's major version or newer; the password reaches it through \
                $PGPASSWORD, never the command line. To restore into a new database:
                  createdb shop2 && psql -d shop2 -c 'CREATE EXTENSION vector'
                  pg_restore --no-owner --dbname=shop2 DEST
                then point --catalog at postgresql://…/shop2 (with the same ?schema=).

                Examples:
                  vsearch catalog backup backups/catalog-$(date +%F).sqlite
                  vsearch catalog backup shop.dump --catalog postgresql://vsearch@db:5432/shop --json
                """)

        @Argument(help: ArgumentHelp("The file to write: a SQLite catalog, or a pg_dump archive for a PostgreSQL catalog.",
                                     valueName: "dest"))
        var destination: String
        @OptionGroup var catalog: CatalogOptions
        @Flag(help: "Replace DEST when it exists.") var force = false
        @Flag(help: "Print the report as JSON.") var json = false

        func validate() throws {
            guard !destination.isEmpty else { throw ValidationError("DEST is empty; name the file to write, e.g. backups/catalog.sqlite") }
            // The catalog's own files first, whatever the spelling (a symbolic link to one included): --force never makes them a DEST.
            if case .sqlite(let path) = catalog.location, let owned = CatalogOwnFiles(catalog: path).owned(destination) {
                throw ValidationError("DEST \(destination) cannot be written: \(owned); back the catalog up to a file of its own")
            }
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: destination, isDirectory: &isFolder) {
                if isFolder.boolValue {
                    throw ValidationError("DEST \(destination) is a folder; name a file in it, e.g. \(destination)/catalog-backup.sqlite")
                }
                if !force { throw ValidationError("DEST \(destination) exists; pass --force to replace it, or choose another file") }
            }
        }

        func run() async throws {
            let progress = ProgressReporter(quiet: json)
            let tenths = Tenths()
            do {
                try catalog.checkLocation()
                let report = try await catalog.location.withCatalog { opened in
                    guard let backup = opened.backup else {
                        throw BackupError.destination(path: destination, reason: "the catalog at \(catalog.location) cannot be backed up by vsearch")
                    }
                    return try await backup.backup(to: destination, replacing: force) { step in
                        guard let first = tenths.advance(to: step.total == 0 ? 10 : step.completed * 10 / step.total) else { return }
                        if first { progress.begin(total: step.total, noun: step.unit) }
                        progress.item(completed: step.completed, failed: false, line: "copied \(step.completed) of \(step.total) \(step.unit)")
                    }
                }
                progress.end()
                if json { Terminal.json(report); return }
                let images = report.images.map { ", \(Terminal.count($0, "image"))" } ?? ""
                Terminal.out("backed up \(report.source) to \(report.destination) (\(Terminal.grouped(report.bytes)) bytes\(images), "
                             + "\(String(format: "%.1f", report.seconds)) s); check: \(report.integrity)")
                Terminal.out("restore: \(report.restore)")
            } catch {
                progress.end()
                throw CLIError.report(error)
            }
        }

        /// The last tenth of the copy reported, so a log gets at most eleven progress lines.
        final class Tenths: Sendable {
            let last = Locked(-1)

            /// Nil when `tenth` was reported already; otherwise whether it is the first report.
            func advance(to tenth: Int) -> Bool? {
                last.withLock { last in
                    guard tenth > last else { return nil }
                    defer { last = tenth }
                    return last < 0
                }
            }
        }
    }
}
