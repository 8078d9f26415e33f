import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The files a SQLite catalog owns on disk: the database, SQLite's `-wal`,
/// `-shm` and `-journal` beside it, and its HNSW folder (`.hnsw/`,
/// ``GraphFiles``) with everything in it. A backup's destination may be none
/// of them, however it is spelled — a relative path, `..`, a symbolic link
/// (even a dangling one, or one to a file SQLite has not made yet), a hard
/// link: replacing the `-wal` under a running server loses committed writes
/// and leaves other processes reading "file is not a database".
///
/// Two comparisons, both needed: resolved paths (every symbolic link
/// followed, `.` and `..` taken out; parts that do not exist yet compared as
/// written), which catch files that do not exist yet; and device + inode of
/// whatever exists, which catch hard links and other mounts of the same folder.
///
/// ```swift
/// if let owned = CatalogOwnFiles(catalog: "catalog.sqlite").owned(destination) {
///     print(owned.description)   // "the catalog's write-ahead log /srv/catalog.sqlite-wal"
/// }
/// ```
public struct CatalogOwnFiles: Sendable {
    /// The catalog file, as given.
    public let catalog: String

    public init(catalog: String) {
        self.catalog = catalog
    }

    /// Which of the catalog's files a path is, or lies inside.
    public struct Owned: Sendable, Hashable, CustomStringConvertible {
        /// What the file is to the catalog: "the catalog itself", "the catalog's write-ahead log", ….
        public var role: String
        /// The catalog's file (its resolved path).
        public var file: String
        /// Where the path resolved to, when that is not the path as written (a symbolic link, `..`).
        public var resolved: String?
        /// Found by device and inode, not by name: a hard link (or another mount) of that file.
        public var sameInode = false

        /// "it is the catalog's write-ahead log /srv/catalog.sqlite-wal", "it points at …, the catalog itself", ….
        public var description: String {
            if sameInode && role != CatalogOwnFiles.indexFolderRole { return "it is the same file (a hard link) as \(role) \(file)" }
            if let resolved { return "it points at \(resolved), " + (resolved == file ? role : "\(role) \(file)") }
            return "it is \(role) \(file)"
        }
    }

    /// The files beside the catalog, with what each is.
    static let companions: [(suffix: String, role: String)] = [
        ("", "the catalog itself"),
        ("-wal", "the catalog's write-ahead log"),
        ("-shm", "the catalog's shared-memory index"),
        ("-journal", "the catalog's rollback journal"),
    ]
    static let indexFolderRole = "inside the catalog's HNSW index folder"

    /// What `path` is among the catalog's files; nil when it is none of them and lies outside its HNSW folder.
    public func owned(_ path: String) -> Owned? {
        let resolvedPath = Self.resolve(path)
        let written = Self.absolute(path)
        let shown = resolvedPath == URL(fileURLWithPath: written).standardizedFileURL.path ? nil : resolvedPath
        // The catalog as written and as resolved: SQLite puts its -wal and -shm beside the file it opened.
        let bases = Array(Set([URL(fileURLWithPath: Self.absolute(catalog)).standardizedFileURL.path, Self.resolve(catalog)])).sorted()
        var existing = stat()
        let exists = stat(path, &existing) == 0
        for base in bases {
            for (suffix, role) in Self.companions {
                let file = base + suffix
                let resolvedFile = Self.resolve(file)
                if resolvedPath == resolvedFile { return Owned(role: role, file: resolvedFile, resolved: shown) }
                var other = stat()
                if exists, stat(file, &other) == 0, Self.same(existing, other) {
                    return Owned(role: role, file: resolvedFile, resolved: shown, sameInode: true)
                }
            }
            let folder = Self.resolve(base + ".hnsw")
            if resolvedPath == folder || resolvedPath.hasPrefix(folder + "/") {
                return Owned(role: Self.indexFolderRole, file: folder, resolved: shown)
            }
            var folderInfo = stat()
            guard stat(folder, &folderInfo) == 0 else { continue }
            // The destination's folder, or one above it, is the index folder under another name (a bind mount).
            var ancestor = (resolvedPath as NSString).deletingLastPathComponent
            while !ancestor.isEmpty {
                var info = stat()
                if stat(ancestor, &info) == 0, Self.same(info, folderInfo) {
                    return Owned(role: Self.indexFolderRole, file: folder, resolved: shown, sameInode: true)
                }
                let up = (ancestor as NSString).deletingLastPathComponent
                if up == ancestor { break }
                ancestor = up
            }
            // A hard link elsewhere to a file in the index folder.
            if exists, let names = FileManager.default.enumerator(atPath: folder)?.allObjects as? [String] {
                for name in names {
                    var info = stat()
                    if stat(folder + "/" + name, &info) == 0, Self.same(existing, info) {
                        return Owned(role: "a file of the catalog's HNSW index", file: folder + "/" + name, resolved: shown, sameInode: true)
                    }
                }
            }
        }
        return nil
    }

    static func same(_ a: stat, _ b: stat) -> Bool { a.st_dev == b.st_dev && a.st_ino == b.st_ino }

    static func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    }

    /// `path` with every symbolic link followed and `.`/`..` taken out. The
    /// part that exists is resolved by the kernel (`realpath`); a dangling
    /// link is followed by hand; what does not exist yet is appended as written.
    static func resolve(_ path: String, depth: Int = 0) -> String {
        let absolute = absolute(path)
        if let real = realpath(absolute, nil) {
            defer { free(real) }
            return String(cString: real)
        }
        guard depth < 40 else { return URL(fileURLWithPath: absolute).standardizedFileURL.path }  // a loop of links
        var info = stat()
        if lstat(absolute, &info) == 0, info.st_mode & S_IFMT == S_IFLNK {
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let length = readlink(absolute, &buffer, buffer.count - 1)
            if length > 0 {
                let target = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
                let next = target.hasPrefix("/") ? target : (absolute as NSString).deletingLastPathComponent + "/" + target
                return resolve(next, depth: depth + 1)
            }
        }
        let parent = (absolute as NSString).deletingLastPathComponent
        let name = (absolute as NSString).lastPathComponent
        guard !parent.isEmpty, parent != absolute else { return absolute }
        let base = resolve(parent, depth: depth + 1)
        switch name {
        case "", ".": return base
        case "..": return (base as NSString).deletingLastPathComponent
        default: return base == "/" ? "/" + name : base + "/" + name
        }
    }
}
