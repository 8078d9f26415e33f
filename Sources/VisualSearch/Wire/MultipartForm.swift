import Foundation

/// `multipart/form-data` bodies (RFC 7578): built by the client for uploads,
/// parsed by the server.
///
/// The client sends what the Swift SDK sends: one part named `image`, file
/// name `image.jpeg`, type `image/jpeg`, boundary
/// `visearch.boundary.%08x%08x`; with no image, a body that is only the
/// closing boundary (docs/wire-protocol.md §1.5, §1.8). The parser accepts that
/// zero-part body, text parts (Java, JS) and file parts, and rejects
/// anything malformed with a typed error instead of guessing.
///
/// ```swift
/// var form = MultipartForm()
/// form.append(file: "image", filename: "image.jpeg", contentType: "image/jpeg", data: jpeg)
/// request.setValue(form.contentType, forHTTPHeaderField: "Content-Type")
/// request.httpBody = Data(form.encoded)
/// let parts = try MultipartForm.parse(body, contentType: form.contentType)
/// ```
public struct MultipartForm: Sendable, Hashable {
    /// One part.
    public struct Part: Sendable, Hashable {
        public var name: String
        public var filename: String?
        public var contentType: String?
        public var data: [UInt8]

        public init(name: String, filename: String? = nil, contentType: String? = nil, data: [UInt8]) {
            self.name = name
            self.filename = filename
            self.contentType = contentType
            self.data = data
        }

        /// The data as UTF-8 text (text fields).
        public var text: String { String(decoding: data, as: UTF8.self) }
    }

    /// The boundary, without the leading dashes.
    public let boundary: String
    public private(set) var parts: [Part] = []

    /// An empty form with the Swift SDK's style of random boundary.
    public init(boundary: String = String(format: "visearch.boundary.%08x%08x", UInt32.random(in: .min ... .max), UInt32.random(in: .min ... .max))) {
        self.boundary = boundary
    }

    /// Adds a text field.
    public mutating func append(field name: String, value: String) {
        parts.append(Part(name: name, data: Array(value.utf8)))
    }

    /// Adds a file.
    public mutating func append(file name: String, filename: String, contentType: String, data: [UInt8]) {
        parts.append(Part(name: name, filename: filename, contentType: contentType, data: data))
    }

    /// `multipart/form-data; boundary=…`.
    public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// The body bytes. With no parts: `\r\n--B--\r\n`, exactly as the Swift SDK.
    public var encoded: [UInt8] {
        guard !parts.isEmpty else { return Array("\r\n--\(boundary)--\r\n".utf8) }
        var body: [UInt8] = []
        for part in parts {
            var head = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(MultipartForm.quote(part.name))\""
            if let filename = part.filename { head += "; filename=\"\(MultipartForm.quote(filename))\"" }
            head += "\r\n"
            if let type = part.contentType { head += "Content-Type: \(type)\r\n" }
            head += "\r\n"
            body += Array(head.utf8)
            body += part.data
            body += Array("\r\n".utf8)
        }
        body += Array("--\(boundary)--\r\n".utf8)
        return body
    }

    static func quote(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "%22")
            .replacingOccurrences(of: "\r", with: "%0D").replacingOccurrences(of: "\n", with: "%0A")
    }

    // MARK: - Parsing

    /// The boundary of a `multipart/form-data` content type, if it is one.
    public static func boundary(ofContentType contentType: String) -> String? {
        let pieces = contentType.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        guard let kind = pieces.first, kind.lowercased() == "multipart/form-data" else { return nil }
        for piece in pieces.dropFirst() {
            let pair = piece.split(separator: "=", maxSplits: 1).map(String.init)
            if pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "boundary" {
                var value = pair[1].trimmingCharacters(in: .whitespaces)
                if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
                return value.isEmpty ? nil : value
            }
        }
        return nil
    }

    /// The longest boundary accepted: 70 characters, RFC 2046's limit.
    public static let maximumBoundaryLength = 70

    /// The most parts a body may hold: 1,000. The SDKs send one image and
    /// their parameters (Java and JS as text parts: at most 100 `fq` and a
    /// few dozen others); a body of thousands of tiny parts costs each one's
    /// header parsing and is refused after the 1,000th instead.
    public static let maximumParts = 1000

    /// Parses a body. A body holding only the closing boundary (or nothing)
    /// has zero parts. Linear in the body's length whatever it holds: the
    /// boundary is found by ``BytePattern`` (at most two looks at each byte
    /// for each search), never by comparing the whole boundary at every position.
    /// - Throws: ``VisualSearchError/invalidParameter(name:reason:)`` with
    ///   name `multipart` for a missing boundary or one over
    ///   ``maximumBoundaryLength``, more than ``maximumParts`` parts, a part without
    ///   `Content-Disposition: form-data; name=…`, or a missing closing boundary.
    public static func parse(_ body: [UInt8], contentType: String) throws(VisualSearchError) -> [Part] {
        var examined = 0
        return try parse(body, contentType: contentType, examined: &examined)
    }

    /// ``parse(_:contentType:)``, adding to `examined` every byte look its searches took (for tests of its cost).
    static func parse(_ body: [UInt8], contentType: String, examined: inout Int) throws(VisualSearchError) -> [Part] {
        guard let boundary = boundary(ofContentType: contentType) else {
            throw .invalidParameter(name: "multipart", reason: "Content-Type \"\(CatalogText.visible(contentType.prefix(200)))\" has no boundary")
        }
        guard boundary.utf8.count <= maximumBoundaryLength else {
            throw .invalidParameter(name: "multipart", reason: "the boundary is \(boundary.utf8.count) characters long; RFC 2046 allows at most \(maximumBoundaryLength)")
        }
        let delimiter = BytePattern(Array("--\(boundary)".utf8))
        let nextDelimiter = BytePattern([13, 10] + delimiter.bytes)
        let blankLine = BytePattern([13, 10, 13, 10])
        var parts: [Part] = []
        guard var position = delimiter.firstIndex(in: body, from: 0, examined: &examined) else {
            if body.allSatisfy({ $0 == 13 || $0 == 10 || $0 == 32 }) { return [] }
            throw .invalidParameter(name: "multipart", reason: "the body does not contain the boundary")
        }
        while true {
            position += delimiter.bytes.count
            // "--" after a delimiter closes the body.
            if position + 1 < body.count, body[position] == 45, body[position + 1] == 45 { return parts }
            guard position + 1 < body.count, body[position] == 13, body[position + 1] == 10 else {
                throw .invalidParameter(name: "multipart", reason: "the body ends without a closing boundary")
            }
            position += 2
            guard let headerEnd = blankLine.firstIndex(in: body, from: position, examined: &examined) else {
                throw .invalidParameter(name: "multipart", reason: "a part has no blank line after its headers")
            }
            let headers = String(decoding: body[position..<headerEnd], as: UTF8.self)
            let dataStart = headerEnd + 4
            guard let next = nextDelimiter.firstIndex(in: body, from: dataStart, examined: &examined) else {
                throw .invalidParameter(name: "multipart", reason: "a part is not followed by a boundary (truncated body?)")
            }
            guard parts.count < maximumParts else {
                throw .invalidParameter(name: "multipart", reason: "the body holds more than \(maximumParts) parts")
            }
            parts.append(try part(headers: headers, data: Array(body[dataStart..<next])))
            position = next + 2
        }
    }

    static func part(headers: String, data: [UInt8]) throws(VisualSearchError) -> Part {
        var name: String?, filename: String?, contentType: String?
        for line in headers.components(separatedBy: "\r\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let key = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            if key == "content-type" { contentType = value }
            if key == "content-disposition" {
                for attribute in value.split(separator: ";").dropFirst() {
                    let pair = attribute.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                    guard pair.count == 2 else { continue }
                    var text = pair[1]
                    if text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") { text = String(text.dropFirst().dropLast()) }
                    switch pair[0].lowercased() {
                    case "name": name = text
                    case "filename": filename = text
                    default: break
                    }
                }
            }
        }
        guard let name, !name.isEmpty else {
            throw .invalidParameter(name: "multipart", reason: "a part has no Content-Disposition name")
        }
        return Part(name: name, filename: filename, contentType: contentType, data: data)
    }
}
