import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ImageOps

/// Where an upload search's query image comes from.
public enum QueryImage: Sendable, Hashable {
    /// Encoded JPEG or PNG bytes (a multipart `image`).
    case bytes([UInt8])
    /// A local file.
    case file(String)
    /// `im_url`: `file://` or `http(s)://`.
    case url(String)
    /// `im_id`: an image an earlier upload search cached.
    case imageID(String)
}

/// Caches uploaded query images under an `im_id` (`<content hash>.jpg`) so a
/// later search can reuse them, in a `query-cache` folder beside the catalog.
struct QueryImageCache: Sendable {
    let directory: String

    func store(_ bytes: [UInt8]) -> String {
        let id = ContentHash.of(bytes) + ".jpg"
        let path = (directory as NSString).appendingPathComponent(id)
        if !FileManager.default.fileExists(atPath: path) {
            try? FileIO.makeDirectory(directory)
            try? FileIO.writeAtomically(bytes, to: path)
        }
        return id
    }

    func load(_ id: String) throws(VisualSearchError) -> [UInt8] {
        guard id.count == 36, id.hasSuffix(".jpg"), id.dropLast(4).allSatisfy(\.isHexDigit) else {
            throw .invalidParameter(name: "im_id", reason: "\"\(id)\" is not an im_id this server returned")
        }
        do {
            return try FileIO.read((directory as NSString).appendingPathComponent(id))
        } catch {
            throw .invalidParameter(name: "im_id", reason: "no cached image \(id); upload the image again")
        }
    }
}

extension QueryImage {
    /// Largest remote image fetched for `im_url`: 16 MiB.
    static let maximumDownload = 16 << 20

    /// The encoded bytes, fetching or loading as needed.
    func load(cache: QueryImageCache, limits: ImageLimits) throws(VisualSearchError) -> [UInt8] {
        switch self {
        case .bytes(let bytes):
            return bytes
        case .file(let path):
            do { return try FileIO.read(path, maxBytes: limits.maxInputBytes) } catch { throw .image(error) }
        case .imageID(let id):
            return try cache.load(id)
        case .url(let text):
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased() else {
                throw .invalidParameter(name: "im_url", reason: "\"\(text)\" is not a URL")
            }
            if scheme == "file" {
                do { return try FileIO.read(url.path, maxBytes: limits.maxInputBytes) } catch { throw .image(error) }
            }
            guard scheme == "http" || scheme == "https" else {
                throw .invalidParameter(name: "im_url", reason: "only file://, http:// and https:// URLs are supported")
            }
            return try QueryImage.download(url)
        }
    }

    /// A blocking GET with a 10 s timeout and a 16 MiB cap (used for `im_url`).
    public static func download(_ url: URL) throws(VisualSearchError) -> [UInt8] {
        final class Box: @unchecked Sendable { var result: Result<[UInt8], VisualSearchError>? }
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        var request = URLRequest(url: url, timeoutInterval: 10)
        request.httpMethod = "GET"
        let task = URLSession.shared.dataTask(with: request) { data, response, error in
            defer { done.signal() }
            if let error {
                box.result = .failure(.invalidParameter(name: "im_url", reason: "cannot fetch \(url): \(error.localizedDescription)"))
            } else if let http = response as? HTTPURLResponse, !(200..<300).contains(http.statusCode) {
                box.result = .failure(.invalidParameter(name: "im_url", reason: "fetching \(url) answered HTTP \(http.statusCode)"))
            } else if let data, data.count <= maximumDownload {
                box.result = .success([UInt8](data))
            } else {
                box.result = .failure(.invalidParameter(name: "im_url", reason: "\(url) is empty or larger than \(maximumDownload) bytes"))
            }
        }
        task.resume()
        done.wait()
        switch box.result {
        case .success(let bytes): return bytes
        case .failure(let error): throw error
        case nil: throw .invalidParameter(name: "im_url", reason: "no answer from \(url)")
        }
    }
}
