import VisualSearch

/// Why a backup was refused or failed; each case names the input and the fix.
/// Nothing is left at the destination when one is thrown.
public enum BackupError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The destination exists and replacing it was not asked for.
    case destinationExists(path: String)
    /// The destination cannot be written: a folder, the catalog itself, an unwritable folder.
    case destination(path: String, reason: String)
    /// The destination is one of the catalog's own files (``CatalogOwnFiles``) —
    /// the catalog, its `-wal`, `-shm` or `-journal`, or inside its HNSW folder —
    /// however spelled: writing it would damage the catalog being copied.
    case destinationIsCatalogFile(path: String, owned: CatalogOwnFiles.Owned)
    /// A program the store's backup runs (`pg_dump`) is not installed; `fix` says how to get it.
    case toolMissing(tool: String, fix: String)
    /// That program ran and failed: how it ended and the last of what it printed (never a password).
    case toolFailed(tool: String, status: String, output: String)
    /// Reading the catalog or writing the copy failed.
    case copy(source: String, destination: String, reason: String)
    /// The copy was written but its check failed: it was removed.
    case verification(destination: String, reason: String)
    /// The catalog itself could not be used.
    case catalog(CatalogStoreError)

    public var description: String {
        switch self {
        case .destinationExists(let path):
            "\(path) exists; choose another destination, or replace it on purpose"
        case .destination(let path, let reason):
            "cannot write the backup to \(path): \(reason)"
        case .destinationIsCatalogFile(let path, let owned):
            "cannot write the backup to \(path): \(owned); back the catalog up to a file of its own"
        case .toolMissing(let tool, let fix):
            "\(tool) is not installed or not found: \(fix)"
        case .toolFailed(let tool, let status, let output):
            "\(tool) failed (\(status))" + (output.isEmpty ? "" : ": \(output)")
        case .copy(let source, let destination, let reason):
            "backing up \(source) to \(destination) failed: \(reason); nothing was written to \(destination)"
        case .verification(let destination, let reason):
            "the copy for \(destination) does not check (\(reason)); it was removed and \(destination) left as it was"
        case .catalog(let error):
            error.description
        }
    }
}
