import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where a backup goes, written so that the destination appears whole or
/// not at all: the copy is made in a temporary sibling (same folder, so the
/// final move is a rename on one file system), made durable with `fsync`,
/// then moved into place — by `link` when an existing file must not be
/// replaced (it fails instead of replacing one that appeared meanwhile), by
/// `rename` when it may. A copy that fails is removed, with the journal
/// files SQLite may have made beside it.
///
/// ```swift
/// let destination = try BackupDestination(path: "backups/catalog.sqlite", replacing: false)
/// try await destination.write { temporary throws(BackupError) in try copy(to: temporary) }
/// ```
public struct BackupDestination: Sendable {
    /// The file the backup ends up in.
    public let path: String
    /// Where it is written first: `.NAME.partial-RANDOM` beside ``path``.
    public let temporaryPath: String
    public let replacing: Bool

    /// Checks the destination and makes its folder when missing.
    /// - Throws: ``BackupError/destinationExists(path:)`` when it exists and
    ///   `replacing` is false, ``BackupError/destination(path:reason:)`` for a
    ///   folder or a folder that cannot be made.
    public init(path: String, replacing: Bool) throws(BackupError) {
        self.path = path
        self.replacing = replacing
        var isFolder: ObjCBool = false
        if path.isEmpty || path.hasSuffix("/") {
            throw .destination(path: path, reason: "name a file, such as backups/catalog.sqlite")
        }
        if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) {
            if isFolder.boolValue { throw .destination(path: path, reason: "it is a folder; name a file in it, such as \(path)/catalog-backup") }
            if !replacing { throw .destinationExists(path: path) }
        }
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty {
            do { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) } catch {
                throw .destination(path: path, reason: "cannot create its folder \(folder): \(error.localizedDescription)")
            }
        }
        let name = (path as NSString).lastPathComponent
        let random = UUID().uuidString.prefix(8).lowercased()
        temporaryPath = (folder.isEmpty ? "" : folder + "/") + ".\(name).partial-\(random)"
    }

    /// Runs `body` with ``temporaryPath``; when it returns, moves the copy
    /// into place durably; when it (or the move) throws, removes the copy.
    public func write<T: Sendable>(_ body: (String) async throws(BackupError) -> T) async throws(BackupError) -> T {
        do {
            let value = try await body(temporaryPath)
            try commit()
            return value
        } catch {
            discard()
            throw error
        }
    }

    /// `fsync` the copy, move it into place, `fsync` the folder.
    func commit() throws(BackupError) {
        try Self.sync(temporaryPath, what: "the copy", destination: path)
        if replacing {
            guard rename(temporaryPath, path) == 0 else { throw failure("cannot move the copy into place", errno) }
        } else if link(temporaryPath, path) == 0 {
            unlink(temporaryPath)
        } else {
            let code = errno
            if code == EEXIST { throw .destinationExists(path: path) }
            // A file system without hard links: check, then rename (a file appearing in between is replaced).
            guard code == EPERM || code == ENOTSUP || code == EOPNOTSUPP || code == EXDEV else {
                throw failure("cannot move the copy into place", code)
            }
            if FileManager.default.fileExists(atPath: path) { throw .destinationExists(path: path) }
            guard rename(temporaryPath, path) == 0 else { throw failure("cannot move the copy into place", errno) }
        }
        let folder = (path as NSString).deletingLastPathComponent
        try? Self.sync(folder.isEmpty ? "." : folder, what: "its folder", destination: path)
    }

    /// Removes the temporary copy and the journal files SQLite may have left beside it.
    public func discard() {
        for suffix in ["", "-journal", "-wal", "-shm"] { unlink(temporaryPath + suffix) }
    }

    func failure(_ what: String, _ code: Int32) -> BackupError {
        .destination(path: path, reason: "\(what): \(String(cString: strerror(code)))")
    }

    static func sync(_ file: String, what: String, destination: String) throws(BackupError) {
        let descriptor = open(file, O_RDONLY)
        guard descriptor >= 0 else {
            throw .destination(path: destination, reason: "cannot open \(what) to sync it: \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else {
            throw .destination(path: destination, reason: "cannot sync \(what) to disk: \(String(cString: strerror(errno)))")
        }
    }

    /// The size of the file at `path` in bytes (0 when unreadable).
    public static func size(of path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? Int) ?? 0
    }
}
