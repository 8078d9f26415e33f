import Foundation
import Hummingbird
import ImageOps
import NIOCore
import SearchEngine
import VisualSearch

/// `GET /images/{im_name}` — a catalog image's original file — and
/// `GET /images/{im_name}?size=N` — its Rezolve thumbnail of maximum
/// dimension N (400, 800, 1200 or 1600), made on first request and kept by a
/// ``ThumbnailCache``; the original when the image is not larger than N.
///
/// Only catalog images are served, by name: a request names an `im_name`,
/// never a path, so nothing outside the catalog's own sources is reachable.
/// Answers carry `ETag` (from the source's modification time and size),
/// `Cache-Control` and answer `If-None-Match` with 304 without reading the
/// file. A source that is an `http(s)` URL is a 302 to it. Open like the
/// page: the pictures are what a shop shows anyway; the metadata and search
/// stay behind the keys.
public struct ImageRoutes: Sendable {
    /// Where catalog images came from.
    public let sources: any CatalogImageSources
    public let cache: ThumbnailCache
    /// `Cache-Control` of every image answer.
    public static let cacheControl = "public, max-age=3600"

    public init(cache: ThumbnailCache, sources: any CatalogImageSources) {
        self.cache = cache
        self.sources = sources
    }

    /// Adds `GET /images/{im_name}` to `router`.
    public func register<Context: VisualSearchRequestContext>(on router: Router<Context>) {
        router.get("images/:name") { request, context in
            let raw = context.parameters.get("name") ?? ""
            return await respond(to: request, name: raw.removingPercentEncoding ?? raw, requestID: context.requestID)
        }
    }

    func respond(to request: Request, name: String, requestID: String) async -> Response {
        func fail(_ status: Int, _ message: String) -> Response {
            Responses.failure(.service(status: status, message: message), family: .viSearch, method: "images", requestID: requestID)
        }
        var size: Int?
        if let text = request.uri.queryParameters.get("size") {
            guard let value = Int(text), cache.maker.rule.sizes.contains(value) else {
                return fail(400, "size \(text) is not a thumbnail size: use one of \(cache.maker.rule.sizes.map(String.init).joined(separator: ", ")), or none for the original")
            }
            size = value
        }
        guard let source = await sources.sources(of: [name])[name] else { return fail(404, "no image named \(name) in the catalog") }
        let path: String
        switch ImageLocation(source: source) {
        case .remote(let url):
            return Response(status: .found, headers: [.location: url, .cacheControl: Self.cacheControl])
        case .file(let file):
            path = file
        }
        guard let file = SourceFile(path: path) else { return fail(404, "the file of image \(name) is missing or unreadable") }
        let tag = file.entityTag(size: size)
        var headers: HTTPFields = [.eTag: tag, .cacheControl: Self.cacheControl]
        if let condition = request.headers[.ifNoneMatch], Self.matches(condition, tag) {
            return Response(status: .notModified, headers: headers)
        }
        var bytes: [UInt8]?
        if let size {
            switch await cache.thumbnail(of: file, size: size, name: name) {
            case .success(.thumbnail(let thumbnail)): bytes = thumbnail
            case .success(.useOriginal): break
            case .success(.refused(let error)):
                return Responses.failure(.engine(error), family: .viSearch, method: "images", requestID: requestID)
            case .failure(.io): return fail(404, "the file of image \(name) is missing or unreadable")
            case .failure(let error): return fail(422, "cannot make a \(size) px thumbnail of \(name): \(error.description)")
            }
        }
        if bytes == nil {
            do throws(ImageOpsError) { bytes = try FileIO.read(file.path) } catch {
                return fail(404, "the file of image \(name) is missing or unreadable")
            }
        }
        let body = bytes ?? []
        headers[.contentType] = ImageFormat(sniffing: body).map(Self.mediaType) ?? "application/octet-stream"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// Whether an `If-None-Match` value names `tag` (or is `*`); weak tags compare by their opaque part.
    static func matches(_ condition: String, _ tag: String) -> Bool {
        condition.split(separator: ",").contains { item in
            var candidate = item.trimmingCharacters(in: .whitespaces)
            if candidate == "*" { return true }
            if candidate.hasPrefix("W/") { candidate.removeFirst(2) }
            return candidate == tag
        }
    }

    static func mediaType(_ format: ImageFormat) -> String {
        switch format {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .gif: "image/gif"
        case .webp: "image/webp"
        case .bmp: "image/bmp"
        case .tiff: "image/tiff"
        case .heif: "image/heic"
        case .avif: "image/avif"
        }
    }
}
