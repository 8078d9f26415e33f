import Foundation
import ImageOps
import ConcurrencyToolkit
import VisualSearch

/// Uploaded query images, kept under an `im_id` (`<content hash>.jpg`) so a
/// later search can reuse them without uploading again.
///
/// Bounded: when the folder holds more than ``maxBytes`` or ``maxFiles``,
/// the least recently stored images are evicted (down to 90% of the bound);
/// an evicted `im_id` answers "upload the image again", as the hosted
/// service does for expired ids. The folder is checked on the first store
/// and every 64 stores after, so a busy server does not list it per request.
public final class QueryImageCache: Sendable {
    public let directory: String
    /// 256 MiB by default.
    public let maxBytes: Int
    /// 10,000 images by default.
    public let maxFiles: Int
    private let storesSinceSweep = Locked(Int.max)

    public init(directory: String, maxBytes: Int = 256 << 20, maxFiles: Int = 10_000) {
        self.directory = directory
        self.maxBytes = maxBytes
        self.maxFiles = maxFiles
    }

    /// Stores bytes and returns their `im_id`; never fails a search (a cache
    /// that cannot be written only means the id cannot be reused).
    public func store(_ bytes: [UInt8]) -> String {
        let id = ContentHash.of(bytes) + ".jpg"
        let path = (directory as NSString).appendingPathComponent(id)
        if FileManager.default.fileExists(atPath: path) {
            try? FileManager.default.setAttributes([.modificationDate: Date()], ofItemAtPath: path)
        } else {
            try? FileIO.makeDirectory(directory)
            try? FileIO.writeAtomically(bytes, to: path)
        }
        let due = storesSinceSweep.withLock { count -> Bool in
            if count >= 64 { count = 0; return true }
            count += 1
            return false
        }
        if due { sweep() }
        return id
    }

    /// The bytes of a cached image.
    /// - Throws: ``VisualSearchError/invalidParameter(name:reason:)`` for a malformed or unknown id.
    public func load(_ id: String) throws(VisualSearchError) -> [UInt8] {
        guard id.count == 36, id.hasSuffix(".jpg"), id.dropLast(4).allSatisfy(\.isHexDigit) else {
            throw .invalidParameter(name: "im_id", reason: "\"\(id.prefix(40))\" is not an im_id this server returned")
        }
        do {
            return try FileIO.read((directory as NSString).appendingPathComponent(id))
        } catch {
            throw .invalidParameter(name: "im_id", reason: "no cached image \(id) (expired or never stored); upload the image again")
        }
    }

    /// Evicts the oldest images while the folder is over either bound.
    public func sweep() {
        let manager = FileManager.default
        guard let names = try? manager.contentsOfDirectory(atPath: directory) else { return }
        var files: [(path: String, size: Int, modified: Date)] = []
        for name in names where name.hasSuffix(".jpg") {
            let path = (directory as NSString).appendingPathComponent(name)
            guard let attributes = try? manager.attributesOfItem(atPath: path) else { continue }
            files.append((path, (attributes[.size] as? Int) ?? 0, (attributes[.modificationDate] as? Date) ?? .distantPast))
        }
        var bytes = files.reduce(0) { $0 + $1.size }
        var count = files.count
        guard bytes > maxBytes || count > maxFiles else { return }
        for file in files.sorted(by: { $0.modified < $1.modified }) {
            if bytes <= maxBytes * 9 / 10 && count <= maxFiles * 9 / 10 { break }
            if (try? manager.removeItem(atPath: file.path)) != nil {
                bytes -= file.size
                count -= 1
            }
        }
    }
}
