import Foundation
import SearchEngine
import VisualSearch

/// The backup role: `pg_dump` of the catalog's schema in its custom format
/// (compressed, restorable table by table with `pg_restore`). pg_dump reads
/// one snapshot of the database in a `REPEATABLE READ` transaction, so the
/// archive is consistent while `vsearch serve` and `vsearch index` write.
/// The archive is then read whole with `pg_restore --list`, which must find
/// the catalog's tables, before it is moved into place.
///
/// Only the catalog's schema is dumped: the pgvector extension (in `public`)
/// is not, so a restore into a new database runs `CREATE EXTENSION vector`
/// first (README, "Backup and restore"). The programs are found as
/// ``PostgreSQLClientTools/locate(_:near:environment:)`` says:
/// `$VSEARCH_PG_DUMP`, else `pg_dump` on `PATH`; pg_dump must be of the
/// server's major version or newer.
extension PostgreSQLCatalogStore: CatalogBackup {
    public func backup(to destination: String, replacing: Bool, progress: @escaping @Sendable (BackupProgress) -> Void)
        async throws(BackupError) -> BackupReport {
        try await backup(to: destination, replacing: replacing, environment: ProcessInfo.processInfo.environment, progress: progress)
    }

    /// ``backup(to:replacing:progress:)`` with the environment the programs are looked up in.
    /// pg_dump tells nothing as it goes, so `progress` counts the two steps: the dump, then the archive's check.
    func backup(to destination: String, replacing: Bool, environment: [String: String],
                progress: @escaping @Sendable (BackupProgress) -> Void = { _ in }) async throws(BackupError) -> BackupReport {
        let start = Date()
        guard let dump = PostgreSQLClientTools.locate("pg_dump", environment: environment) else {
            throw .toolMissing(tool: "pg_dump", fix: PostgreSQLClientTools.installHint("pg_dump"))
        }
        let restore = PostgreSQLClientTools.locate("pg_restore", near: dump, environment: environment)
        let target = try BackupDestination(path: destination, replacing: replacing)
        let settings = settings, location = location
        let connection = PostgreSQLClientTools.connectionEnvironment(settings)
        let integrity = try await target.write { temporary throws(BackupError) in
            progress(BackupProgress(completed: 0, total: 2, unit: "steps"))
            let dumped: PostgreSQLClientTools.Outcome
            do {
                dumped = try await PostgreSQLClientTools.run(dump, ["--format=custom", "--schema=" + settings.quotedSchema, "--no-password",
                                                                    "--file=" + temporary], environment: connection)
            } catch {
                throw .copy(source: location, destination: destination, reason: "cannot run \(dump): \(error)")
            }
            guard dumped.succeeded else {
                var output = PostgreSQLClientTools.tail(dumped.stderr)
                if dumped.stderr.contains("server version mismatch") {
                    output += " — use a pg_dump of the server's major version or newer: "
                        + "set $\(PostgreSQLClientTools.overrideVariable(for: "pg_dump")) to its path"
                }
                throw .toolFailed(tool: dump, status: dumped.status, output: output)
            }
            progress(BackupProgress(completed: 1, total: 2, unit: "steps"))
            guard let restore else { return "not checked: pg_restore not found (\(PostgreSQLClientTools.installHint("pg_restore")))" }
            let checked = try await Self.checkArchive(temporary, schema: settings.schema, restore: restore, destination: destination)
            progress(BackupProgress(completed: 2, total: 2, unit: "steps"))
            return checked
        }
        return BackupReport(source: location, destination: destination, format: .pgDumpCustom, bytes: BackupDestination.size(of: destination),
                            images: nil, integrity: integrity, seconds: Date().timeIntervalSince(start),
                            restore: "pg_restore --dbname=DATABASE \(destination) (after CREATE EXTENSION vector in a new database; README: Backup and restore)")
    }

    /// `pg_restore --list`: the archive reads to its end and holds the data of the catalog's tables.
    static func checkArchive(_ archive: String, schema: String, restore: String, destination: String) async throws(BackupError) -> String {
        let listed: PostgreSQLClientTools.Outcome
        do { listed = try await PostgreSQLClientTools.run(restore, ["--list", archive], environment: [:]) } catch {
            throw .verification(destination: destination, reason: "cannot run \(restore): \(error)")
        }
        guard listed.succeeded else {
            throw .verification(destination: destination, reason: "pg_restore --list: \(listed.status): \(PostgreSQLClientTools.tail(listed.stderr))")
        }
        let missing = ["images", "image_values", "fields", "catalog_state", "vsearch_migrations"].filter { table in
            !listed.stdout.split(separator: "\n").contains { $0.contains("TABLE DATA \(schema) \(table) ") }
        }
        guard missing.isEmpty else {
            throw .verification(destination: destination, reason: "the archive lacks the data of \(missing.joined(separator: ", ")) in schema \(schema)")
        }
        return "ok"
    }
}
