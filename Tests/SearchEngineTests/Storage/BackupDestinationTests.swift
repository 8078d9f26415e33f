import Foundation
import SearchEngine
import TestSupport
import Testing

/// ``BackupDestination``: a backup's file appears whole or not at all, and
/// never replaces a file it was not told to.
@Suite("BackupDestination")
struct BackupDestinationTests {
    static func folderListing(_ folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
    }

    @Test("a copy that returns is moved into place; its folder is made; nothing else is left")
    func commits() async throws {
        let folder = Repository.temporaryDirectory("destination")
        let path = folder + "/a/b/backup.bin"
        let destination = try BackupDestination(path: path, replacing: false)
        #expect(!FileManager.default.fileExists(atPath: destination.temporaryPath) && !FileManager.default.fileExists(atPath: path))
        let written = try await destination.write { temporary throws(BackupError) in
            _ = FileManager.default.createFile(atPath: temporary, contents: Data("whole".utf8))
            #expect(!FileManager.default.fileExists(atPath: path), "nothing at the destination while the copy is written")
            return temporary
        }
        #expect((written as NSString).deletingLastPathComponent == folder + "/a/b", "the temporary copy is a sibling")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "whole")
        #expect(Self.folderListing(folder + "/a/b") == ["backup.bin"])
    }

    @Test("a copy that fails is removed with SQLite's journal files, and the destination never appears")
    func failureLeavesNothing() async throws {
        let folder = Repository.temporaryDirectory("destination")
        let path = folder + "/backup.sqlite"
        let destination = try BackupDestination(path: path, replacing: false)
        await #expect(throws: BackupError.copy(source: "s", destination: path, reason: "disk full")) {
            try await destination.write { temporary throws(BackupError) in
                for suffix in ["", "-journal", "-wal"] { _ = FileManager.default.createFile(atPath: temporary + suffix, contents: Data("half".utf8)) }
                throw .copy(source: "s", destination: path, reason: "disk full")
            }
        }
        #expect(Self.folderListing(folder).isEmpty)
    }

    @Test("a file that appears at the destination during the copy is kept, not replaced, and the copy removed")
    func appearedMeanwhile() async throws {
        let folder = Repository.temporaryDirectory("destination")
        let path = folder + "/backup.bin"
        let destination = try BackupDestination(path: path, replacing: false)
        await #expect(throws: BackupError.destinationExists(path: path)) {
            try await destination.write { temporary throws(BackupError) in
                _ = FileManager.default.createFile(atPath: temporary, contents: Data("copy".utf8))
                _ = FileManager.default.createFile(atPath: path, contents: Data("someone else's".utf8))
            }
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "someone else's")
        #expect(Self.folderListing(folder) == ["backup.bin"])
    }

    @Test("refusals before anything is written: an existing file unless replacing, a folder, a folder that cannot be made")
    func refusals() throws {
        let folder = Repository.temporaryDirectory("destination")
        let existing = folder + "/existing"
        _ = FileManager.default.createFile(atPath: existing, contents: Data("x".utf8))
        #expect(throws: BackupError.destinationExists(path: existing)) { try BackupDestination(path: existing, replacing: false) }
        #expect(try BackupDestination(path: existing, replacing: true).path == existing)
        #expect(throws: BackupError.self) { try BackupDestination(path: folder, replacing: true) }
        #expect(throws: BackupError.self) { try BackupDestination(path: existing + "/below/backup", replacing: false) }
        #expect(Self.folderListing(folder) == ["existing"])
    }
}
