import Foundation
import SearchEngine
import TestSupport
import Testing

/// ``CatalogOwnFiles``: a backup's destination is never one of the catalog's
/// own files, whatever the spelling — and a file of its own always passes.
@Suite("CatalogOwnFiles")
struct CatalogOwnFilesTests {
    @Test("the catalog, -wal, -shm, -journal and the HNSW folder are found by path (relative, .., //, symbolic links, dangling ones, links to the folder) and by inode (hard links); other files are not")
    func spellings() throws {
        let folder = Repository.temporaryDirectory("own-files")
        let catalog = folder + "/catalog.sqlite"
        let manager = FileManager.default
        for suffix in ["", "-wal", "-shm"] { #expect(manager.createFile(atPath: catalog + suffix, contents: Data("x".utf8))) }
        try manager.createDirectory(atPath: catalog + ".hnsw", withIntermediateDirectories: true)
        #expect(manager.createFile(atPath: catalog + ".hnsw/color-1.graph", contents: Data("g".utf8)))
        let other = Repository.temporaryDirectory("own-files-elsewhere")
        try manager.createDirectory(atPath: folder + "/sub", withIntermediateDirectories: true)
        try manager.createSymbolicLink(atPath: other + "/wal", withDestinationPath: catalog + "-wal")
        try manager.createSymbolicLink(atPath: other + "/journal", withDestinationPath: catalog + "-journal")
        try manager.createSymbolicLink(atPath: other + "/chain", withDestinationPath: other + "/wal")
        try manager.createSymbolicLink(atPath: other + "/index", withDestinationPath: catalog + ".hnsw")
        try manager.linkItem(atPath: catalog, toPath: other + "/hard")
        try manager.linkItem(atPath: catalog + ".hnsw/color-1.graph", toPath: other + "/hard.graph")
        let own = CatalogOwnFiles(catalog: catalog)

        let owned: [(String, String)] = [
            (catalog, "the catalog itself"), (catalog + "-wal", "write-ahead log"), (catalog + "-shm", "shared-memory"),
            (catalog + "-journal", "rollback journal"), (folder + "/sub/../catalog.sqlite-wal", "write-ahead log"),
            (folder + "//./catalog.sqlite", "the catalog itself"), (other + "/wal", "points at"), (other + "/chain", "write-ahead log"),
            (other + "/journal", "rollback journal"), (other + "/hard", "hard link"), (other + "/hard.graph", "hard link"),
            (catalog + ".hnsw", "HNSW"), (catalog + ".hnsw/color.json", "HNSW"), (catalog + ".hnsw/new/x.sqlite", "HNSW"),
            (other + "/index/x.sqlite", "HNSW"), (catalog + "-wal/../catalog.sqlite", "the catalog itself"),
        ]
        for (path, names) in owned {
            let found = own.owned(path)
            #expect(found != nil && "\(found!)".contains(names), "\(path): \(found.map { "\($0)" } ?? "not found")")
        }
        // (Relative spellings are the CLI test's: changing this process's working directory would disturb other tests.)
        for path in [folder + "/backup.sqlite", folder + "/catalog.sqlite-backup", folder + "/catalog.sqlite.hnsw-copy", other + "/new.sqlite",
                     folder + "/sub/catalog.sqlite"] {
            #expect(own.owned(path) == nil, "\(path)")
        }
    }
}
