import Foundation

/// The backup role of a catalog store: a consistent copy of the whole
/// catalog in one file, taken while other processes (`vsearch serve`,
/// `vsearch index`) go on reading and writing it.
///
/// Contract every store keeps:
/// - the copy is one state of the catalog: every committed write before the
///   backup began, none of a transaction that had not committed, never half
///   of one — whatever writers do meanwhile;
/// - the destination appears whole or not at all: the copy is written to a
///   temporary sibling, checked, made durable (`fsync`) and then moved into
///   place; a failed backup removes what it wrote (``BackupDestination``);
/// - an existing destination is replaced only when `replacing` says so.
///
/// How to use a copy depends on the store: a SQLite copy *is* a catalog
/// (`vsearch serve --catalog COPY`); a PostgreSQL copy is a `pg_dump` archive
/// that `pg_restore` loads (README, "Backup and restore").
///
/// ```swift
/// let report = try await CatalogLocation(parsing: "catalog.sqlite").withCatalog { opened in
///     try await opened.backup!.backup(to: "backups/catalog.sqlite", replacing: false) { step in
///         print(step.completed, "of", step.total, step.unit)
///     }
/// }
/// ```
public protocol CatalogBackup: Sendable {
    /// Copies the catalog into `destination`, checks the copy and reports it.
    /// - Parameters:
    ///   - replacing: replace `destination` when it exists (otherwise ``BackupError/destinationExists(path:)``).
    ///   - progress: called as the copy advances (from another thread), when the store can tell.
    func backup(to destination: String, replacing: Bool, progress: @escaping @Sendable (BackupProgress) -> Void)
        async throws(BackupError) -> BackupReport
}

/// How far a backup has come.
public struct BackupProgress: Sendable, Hashable {
    public var completed: Int
    public var total: Int
    /// What is counted ("pages").
    public var unit: String

    public init(completed: Int, total: Int, unit: String) {
        self.completed = completed
        self.total = total
        self.unit = unit
    }
}

/// What a backup wrote and what its check found.
public struct BackupReport: Sendable, Hashable, Codable {
    /// What the copy is.
    public enum Format: String, Sendable, Hashable, Codable {
        /// A SQLite catalog file: open it as it is.
        case sqlite
        /// A `pg_dump` archive in its custom format: load it with `pg_restore`.
        case pgDumpCustom = "pg_dump-custom"
    }

    /// The catalog copied (a path, or a URL without its password).
    public var source: String
    /// The file written.
    public var destination: String
    public var format: Format
    public var bytes: Int
    /// Images in the copy, when the check counts them (SQLite).
    public var images: Int?
    /// The check of the copy: "ok" (SQLite's `PRAGMA integrity_check` on the
    /// copy; for a `pg_dump` archive, `pg_restore --list` reads it whole and
    /// finds the catalog's tables).
    public var integrity: String
    public var seconds: Double
    /// How to use the copy.
    public var restore: String

    public init(source: String, destination: String, format: Format, bytes: Int, images: Int?, integrity: String, seconds: Double,
                restore: String) {
        self.source = source
        self.destination = destination
        self.format = format
        self.bytes = bytes
        self.images = images
        self.integrity = integrity
        self.seconds = seconds
        self.restore = restore
    }
}
