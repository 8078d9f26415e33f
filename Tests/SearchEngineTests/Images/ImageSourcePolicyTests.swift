import Foundation
import SearchEngine
import TestSupport
import Testing
import VisualSearch

@Suite("ImageSourcePolicy", .timeLimit(.minutes(10)))
struct ImageSourcePolicyTests {
    static let secret = "TOP-SECRET-CONTENT-7f3a"

    /// `root/` (an image root: `inside.jpg`, `sub/deep.jpg`, `link.jpg` → a file outside),
    /// `root-sibling/` (shares the root's name as a prefix), `outside/secret.txt`.
    struct Layout {
        let base: String
        var root: String { base + "/root" }
        var outside: String { base + "/outside/secret.txt" }

        init() throws {
            base = Repository.temporaryDirectory("policy")
            let manager = FileManager.default
            for folder in ["/root/sub", "/root-sibling", "/outside"] {
                try manager.createDirectory(atPath: base + folder, withIntermediateDirectories: true)
            }
            for file in ["/root/inside.jpg", "/root/sub/deep.jpg", "/root-sibling/next.jpg"] {
                #expect(manager.createFile(atPath: base + file, contents: Data([0xFF, 0xD8, 0xFF])))
            }
            #expect(manager.createFile(atPath: base + "/outside/secret.txt", contents: Data(ImageSourcePolicyTests.secret.utf8)))
            try manager.createSymbolicLink(atPath: base + "/root/link.jpg", withDestinationPath: base + "/outside/secret.txt")
            try manager.createSymbolicLink(atPath: base + "/root/sublink", withDestinationPath: base + "/outside")
        }

        /// The canonical path of a file (the temporary folder may itself sit behind a symlink).
        func real(_ path: String) -> String {
            guard let resolved = realpath(path, nil) else { return path }
            defer { free(resolved) }
            return String(cString: resolved)
        }
    }

    /// A refusal: a fetch error naming the location, whose reason contains `reason`, and never the file's bytes.
    static func expectRefused(_ policy: ImageSourcePolicy, _ location: String, reason: String,
                              sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            let path = try policy.permittedFile(location)
            Issue.record("\(location) was permitted as \(path)", sourceLocation: sourceLocation)
        } catch {
            guard case .fetch(_, let why) = error else {
                Issue.record("\(location): \(error) is not a fetch error", sourceLocation: sourceLocation)
                return
            }
            #expect(why.contains(reason), "\(location): \(why)", sourceLocation: sourceLocation)
            #expect(!error.description.contains(secret) && !error.message.contains(secret), sourceLocation: sourceLocation)
        }
    }

    @Test("with no image roots every local file is refused, and the message says how to allow a folder")
    func noRoots() throws {
        let layout = try Layout()
        for location in [layout.root + "/inside.jpg", "file://" + layout.root + "/inside.jpg", "/etc/passwd"] {
            Self.expectRefused(.uploadsOnly, location, reason: "`ImageSourcePolicy.imageRoots`")
        }
    }

    @Test("a file inside a root is permitted, as a path or a file:// URL, and resolves to its real path")
    func insideRoot() throws {
        let layout = try Layout()
        let policy = ImageSourcePolicy(imageRoots: [layout.root])
        let expected = layout.real(layout.root + "/inside.jpg")
        for location in [layout.root + "/inside.jpg", "file://" + layout.root + "/inside.jpg", "FILE://" + layout.root + "/inside.jpg",
                         "file://localhost" + layout.root + "/inside.jpg", layout.root + "/sub/../inside.jpg", layout.root + "/./inside.jpg"] {
            #expect(try policy.permittedFile(location) == expected, "\(location)")
        }
        #expect(try policy.permittedFile(layout.root + "/sub/deep.jpg") == layout.real(layout.root + "/sub/deep.jpg"))
        // A root given with a trailing slash, or through `..`, is the same root.
        #expect(try ImageSourcePolicy(imageRoots: [layout.root + "/"]).permittedFile(layout.root + "/inside.jpg") == expected)
        #expect(try ImageSourcePolicy(imageRoots: [layout.root + "/sub/.."]).permittedFile(layout.root + "/inside.jpg") == expected)
    }

    @Test("leaving a root is refused: .. segments, encoded ones, a sibling sharing the root's name, the root itself")
    func escapes() throws {
        let layout = try Layout()
        let policy = ImageSourcePolicy(imageRoots: [layout.root])
        for location in [layout.root + "/../outside/secret.txt", layout.root + "/sub/../../outside/secret.txt",
                         "file://" + layout.root + "/../outside/secret.txt", "file://" + layout.root + "/%2E%2E/outside/secret.txt",
                         layout.base + "/root-sibling/next.jpg", layout.root, layout.root + "/", "/etc/passwd"] {
            Self.expectRefused(policy, location, reason: "not inside an image root")
        }
    }

    @Test("a symbolic link inside a root that points outside it is refused", arguments: ["/link.jpg", "/sublink/secret.txt"])
    func symlinks(link: String) throws {
        let layout = try Layout()
        Self.expectRefused(ImageSourcePolicy(imageRoots: [layout.root]), layout.root + link, reason: "not inside an image root")
        Self.expectRefused(ImageSourcePolicy(imageRoots: [layout.root]), "file://" + layout.root + link, reason: "not inside an image root")
        // With the outside folder as a root too, the same link is fine.
        let both = ImageSourcePolicy(imageRoots: [layout.root, layout.base + "/outside"])
        #expect(try both.permittedFile(layout.root + link) == layout.real(layout.outside))
    }

    @Test("a missing file inside a root is refused without saying more")
    func missing() throws {
        let layout = try Layout()
        Self.expectRefused(ImageSourcePolicy(imageRoots: [layout.root]), layout.root + "/absent.jpg", reason: "no readable file")
    }

    @Test("relative paths and other hosts are refused whatever the policy", arguments: [
        ("inside.jpg", "absolute path"), ("root/inside.jpg", "absolute path"), ("./x.jpg", "absolute path"),
        ("file:relative.jpg", "absolute path"), ("file://evil.example/etc/passwd", "not a local file:// URL"),
        ("file://10.0.0.1/share/a.jpg", "not a local file:// URL"),
    ])
    func malformed(location: String, reason: String) throws {
        let layout = try Layout()
        for policy in [ImageSourcePolicy(imageRoots: [layout.root]), .commandLine] {
            Self.expectRefused(policy, location, reason: reason)
        }
    }

    @Test("readsAnyLocalFile permits any absolute path, inside a root or not")
    func anyLocalFile() throws {
        let layout = try Layout()
        #expect(ImageSourcePolicy.commandLine.readsAnyLocalFile)
        #expect(!ImageSourcePolicy.uploadsOnly.readsAnyLocalFile)
        #expect(try ImageSourcePolicy.commandLine.permittedFile(layout.outside) == layout.outside)
        #expect(try ImageSourcePolicy.commandLine.permittedFile("file://" + layout.outside) == layout.outside)
        #expect(try ImageSourcePolicy(readsAnyLocalFile: true).permittedFile(layout.root + "/link.jpg") == layout.root + "/link.jpg")
    }

    @Test("the defaults: nothing by location, 16 MiB downloads, 10 s without progress")
    func defaults() {
        let policy = ImageSourcePolicy()
        #expect(policy == .uploadsOnly)
        #expect(policy.imageRoots.isEmpty && !policy.readsAnyLocalFile && policy.remoteFetch == nil)
        #expect(policy.maxDownloadBytes == 16 << 20 && policy.fetchTimeout == 10)
        #expect(ImageSourcePolicy.commandLine.remoteFetch != nil)
    }
}
