import Foundation

/// A catalog image's source file as the image routes see it: where it is
/// and what `stat` says, which is enough for an `ETag` and a cache key —
/// a changed file (new modification time or size) gets new ones.
struct SourceFile: Sendable, Hashable {
    /// The absolute path.
    let path: String
    /// Modification time, nanoseconds since the epoch.
    let modified: Int64
    /// Size in bytes.
    let bytes: Int64

    /// The regular file at `path`; nil when it is missing, unreadable or not a regular file.
    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, access(path, R_OK) == 0 else { return nil }
        self.path = path
        modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        bytes = Int64(info.st_size)
    }

    /// The strong entity tag of the original (`size` nil) or of its thumbnail of `size`.
    func entityTag(size: Int?) -> String {
        "\"\(size.map { "t\($0)" } ?? "o")-\(String(modified, radix: 16))-\(String(bytes, radix: 16))\""
    }
}

/// Where a catalog image's pixels are, from the catalog's `source`: a local
/// file (an absolute path or a `file://` URL) or a remote `http(s)` URL.
enum ImageLocation: Sendable, Hashable {
    case file(String)
    case remote(String)

    init(source: String) {
        let lowered = source.lowercased()
        if lowered.hasPrefix("http://") || lowered.hasPrefix("https://") {
            self = .remote(source)
        } else if lowered.hasPrefix("file://"), let url = URL(string: source), url.isFileURL {
            self = .file(url.path)
        } else {
            self = .file(source)
        }
    }
}
