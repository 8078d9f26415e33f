import Foundation
import SearchEngine

/// The web page's files — HTML, CSS and JavaScript modules kept in
/// `Sources/VisualSearchServer/WebPage/` and embedded in the binary at build
/// time (SwiftPM `embedInCode`) — or, while developing the page, read from a
/// folder on every request (`vsearch serve --web-root`).
///
/// A file is named by its base name (`app.js`); only names of lower-case
/// letters, digits, `-`, `_` and `.` that do not start with a dot exist, so a
/// request can never name a path.
public struct WebAssets: Sendable {
    /// One file, ready to serve.
    public struct File: Sendable, Hashable {
        public var bytes: [UInt8]
        /// `Content-Type`, from the extension.
        public var contentType: String
        /// A strong `ETag` from the content.
        public var entityTag: String
    }

    enum Origin: Sendable {
        case embedded([String: File])
        case folder(String)
    }

    let origin: Origin

    /// The files built into the binary.
    public static let embedded = WebAssets(origin: .embedded(Dictionary(uniqueKeysWithValues: WebPageFiles.all.map { name, bytes in
        (name, File(name: name, bytes: bytes))
    })))

    /// The files of `folder`, read on every request (for developing the page without rebuilding).
    public static func folder(_ folder: String) -> WebAssets { WebAssets(origin: .folder(folder)) }

    /// The file called `name`, or nil.
    public func file(_ name: String) -> File? {
        guard Self.isAssetName(name) else { return nil }
        switch origin {
        case .embedded(let files): return files[name]
        case .folder(let folder):
            guard let data = FileManager.default.contents(atPath: (folder as NSString).appendingPathComponent(name)) else { return nil }
            return File(name: name, bytes: Array(data))
        }
    }

    /// Whether `name` is a name a page file may have.
    static func isAssetName(_ name: String) -> Bool {
        guard let first = name.utf8.first, first != UInt8(ascii: "."), name.utf8.count <= 64 else { return false }
        return name.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
        } && Self.contentTypes[(name as NSString).pathExtension] != nil
    }

    static let contentTypes = [
        "html": "text/html; charset=utf-8", "js": "text/javascript; charset=utf-8", "css": "text/css; charset=utf-8",
        "svg": "image/svg+xml", "png": "image/png", "ico": "image/x-icon", "json": "application/json; charset=utf-8",
        "txt": "text/plain; charset=utf-8",
    ]
}

extension WebAssets.File {
    init(name: String, bytes: [UInt8]) {
        self.bytes = bytes
        contentType = WebAssets.contentTypes[(name as NSString).pathExtension] ?? "application/octet-stream"
        entityTag = "\"\(ContentHash.of(bytes).prefix(20))\""
    }
}
