import ConcurrencyToolkit
import Foundation
import GRDB
import SearchEngine
import VisualSearch

/// The backup role: SQLite's online backup API (`sqlite3_backup_*`, through
/// GRDB's `DatabaseReader.backup(to:)`), copying the file page by page from
/// one read transaction of the pool. In WAL mode that transaction sees one
/// state of the catalog however long the copy takes, and never blocks
/// `vsearch serve` or `vsearch index` writing meanwhile: their commits go to
/// the write-ahead log, which is not checkpointed past the copy's snapshot
/// until it ends. The copy is then opened on its own and checked with
/// `PRAGMA integrity_check` before it is moved into place.
extension SQLiteCatalogStore: CatalogBackup {
    /// Pages copied per step of the backup (4 MiB at SQLite's default 4 KiB pages): the progress granularity.
    static let backupPagesPerStep: CInt = 1024

    public func backup(to destination: String, replacing: Bool, progress: @escaping @Sendable (BackupProgress) -> Void)
        async throws(BackupError) -> BackupReport {
        let start = Date()
        // Never the catalog, its -wal/-shm/-journal or its HNSW folder, however DEST is spelled.
        if let owned = CatalogOwnFiles(catalog: path).owned(destination) { throw .destinationIsCatalogFile(path: destination, owned: owned) }
        let target = try BackupDestination(path: destination, replacing: replacing)
        let reader = self.reader, source = path
        let (images, integrity) = try await target.write { temporary throws(BackupError) in
            let check: CopyCheck
            do {
                check = try await OwnThread.run(named: "vsearch-sqlite") { try Self.copy(from: reader, to: temporary, progress: progress) }
            } catch {
                throw .copy(source: source, destination: destination, reason: Self.wrap(error).description)
            }
            guard check.integrity == "ok" else { throw .verification(destination: destination, reason: "integrity check: \(check.integrity)") }
            guard check.applicationID == Self.applicationID else {
                throw .verification(destination: destination, reason: "the copy is not marked as a vsearch catalog")
            }
            return (check.images, check.integrity)
        }
        return BackupReport(source: path, destination: destination, format: .sqlite, bytes: BackupDestination.size(of: destination),
                            images: images, integrity: integrity, seconds: Date().timeIntervalSince(start),
                            restore: "vsearch serve --catalog \(destination)")
    }

    /// What the check of a copy found.
    struct CopyCheck: Sendable {
        var images: Int
        /// `PRAGMA integrity_check`'s first lines: "ok" when healthy.
        var integrity: String
        var applicationID: Int32
    }

    /// Copies `reader`'s database into a new file at `temporary`, then opens
    /// that file on a connection of its own and checks it. (The copy keeps the
    /// source's WAL mark, so that connection makes the -wal and -shm files
    /// beside it, and removes them when it closes: it writes nothing.)
    static func copy(from reader: any DatabaseReader, to temporary: String, progress: @escaping @Sendable (BackupProgress) -> Void)
        throws -> CopyCheck {
        let copy = try DatabaseQueue(path: temporary)
        try reader.backup(to: copy, pagesPerStep: backupPagesPerStep) { step in
            progress(BackupProgress(completed: step.completedPageCount, total: step.totalPageCount, unit: "pages"))
        }
        // The copy's log of changes starts at its version: an engine that read another state never catches up from it.
        try copy.write { db in if try db.tableExists("image_changes") { try resetChanges(db) } }
        try copy.close()

        let checking = try DatabaseQueue(path: temporary)
        defer { try? checking.close() }
        do {
            return try Self.check(checking)
        } catch let error as DatabaseError {
            // SQLite refuses to read the copy at all (SQLITE_CORRUPT before any row): the check failed.
            return CopyCheck(images: 0, integrity: error.message ?? "\(error.resultCode)", applicationID: 0)
        }
    }

    /// `PRAGMA integrity_check`, then (on a healthy copy) its images and application id.
    static func check(_ checking: DatabaseQueue) throws -> CopyCheck {
        try checking.read { db in
            let integrity = try String.fetchAll(db, sql: "PRAGMA integrity_check").prefix(5).joined(separator: "; ")
            guard integrity == "ok" else { return CopyCheck(images: 0, integrity: integrity, applicationID: 0) }  // counting could fail
            return CopyCheck(images: try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM images") ?? 0, integrity: integrity,
                             applicationID: try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0)
        }
    }

}
