import Foundation
import Hummingbird
import NIOCore
import VisualSearch

/// A request's parameters, merged from wherever the SDKs put them
/// (docs/wire-protocol.md §1.5): the query string first, then form fields or
/// multipart text parts (so a body value overrides the query string), plus
/// the multipart `image` file part.
///
/// Parsing is separate from the endpoints: they see one ``WireQuery`` and
/// optional image bytes, whichever SDK sent the request.
struct RequestParameters: Sendable {
    var query: WireQuery
    /// The `image` part's bytes, when a multipart body carried one (an empty part counts as none).
    var image: [UInt8]?
    /// The raw body unless it was multipart (JSON for tracking batches, whatever its declared type).
    var rawBody: [UInt8]?

    /// The parameters admission already read and parsed for this request
    /// (a body whose head carried no credential: ``AdmissionMiddleware``
    /// read it to check the form's key), so the route does not parse it again.
    @TaskLocal static var admitted: RequestParameters?

    /// Reads and merges; refuses bodies over `maxBodyBytes` before reading
    /// them when `Content-Length` says so, and while reading otherwise.
    static func read(_ request: Request, maxBodyBytes: Int) async throws(ServerError) -> RequestParameters {
        if let admitted { return admitted }
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > maxBodyBytes {
            throw .bodyTooLarge(limit: maxBodyBytes)
        }
        guard request.method == .post || request.method == .put else { return RequestParameters(query: WireQuery(parsing: request.uri.query ?? "")) }
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: maxBodyBytes)
        } catch is NIOTooManyBytesError {
            throw .bodyTooLarge(limit: maxBodyBytes)
        } catch {
            throw .badBody("the body could not be read (\(error))")
        }
        return try parse(Array(buffer.readableBytesView), of: request)
    }

    /// Merges the query string of `request` with `body`, already read, by its content type.
    static func parse(_ body: [UInt8], of request: Request) throws(ServerError) -> RequestParameters {
        var query = WireQuery(parsing: request.uri.query ?? "")
        let contentType = request.headers[.contentType] ?? ""
        let kind = contentType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        var image: [UInt8]?
        var raw: [UInt8]?
        switch kind {
        case "multipart/form-data":
            let parts: [MultipartForm.Part]
            do { parts = try MultipartForm.parse(body, contentType: contentType) } catch { throw .engine(error) }
            for part in parts {
                if part.name == "image" {
                    if !part.data.isEmpty { image = part.data }
                } else if part.filename == nil {
                    query.append(part.name, part.text)
                }
            }
        case "application/x-www-form-urlencoded":
            query.merge(WireQuery(parsing: String(decoding: body, as: UTF8.self)))
            raw = body
        default:
            if !body.isEmpty { raw = body }
        }
        return RequestParameters(query: query, image: image, rawBody: raw)
    }
}
