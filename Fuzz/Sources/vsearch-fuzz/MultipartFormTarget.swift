import VisualSearch

/// `multipart`: the server's `multipart/form-data` parser. The input's first line (up to the
/// first LF) is the request's `Content-Type` header, so the boundary varies with the input; the
/// rest is the body. An input without LF is a body sent with `boundary=fuzz`.
enum MultipartFormTarget {
    /// The harness.
    static let target = FuzzTarget(
        name: "multipart",
        summary: "MultipartForm.boundary(ofContentType:), MultipartForm.parse(_:contentType:); parts re-encoded and parsed again",
        maximumInputLength: 16 * 1024,
        timeoutSeconds: 5,
        seedGlobs: [],
        run: { input in run(Array(input)) }
    )

    /// Splits the input into content type and body, parses, and checks that a form rebuilt from
    /// simple parts parses back to the same parts.
    static func run(_ input: [UInt8]) {
        let contentType: String
        let body: [UInt8]
        if let newline = input.firstIndex(of: 0x0A) {
            contentType = String(decoding: input[..<newline], as: UTF8.self)
            body = Array(input[(newline + 1)...])
        } else {
            contentType = "multipart/form-data; boundary=fuzz"
            body = input
        }
        _ = MultipartForm.boundary(ofContentType: contentType)
        guard let parts = try? MultipartForm.parse(body, contentType: contentType) else { return }
        for part in parts { _ = part.text }

        // Round trip: a form the client would build from parts whose names and file names need
        // no quoting and whose data does not hold the boundary parses back to exactly those parts.
        guard let boundary = MultipartForm.boundary(ofContentType: contentType), boundary.utf8.allSatisfy(isTokenByte) else { return }
        let delimiter = Array("--\(boundary)".utf8)
        let simple = parts.filter { part in
            isPlain(part.name) && !part.name.isEmpty && (part.filename.map(isPlain) ?? true)
                && (part.contentType.map(isPlain) ?? true) && !contains(part.data, delimiter)
        }
        var form = MultipartForm(boundary: boundary)
        for part in simple {
            if let filename = part.filename {
                form.append(file: part.name, filename: filename, contentType: part.contentType ?? "application/octet-stream", data: part.data)
            } else {
                form.append(field: part.name, value: part.text)
            }
        }
        let reparsed: [MultipartForm.Part]
        do { reparsed = try MultipartForm.parse(form.encoded, contentType: form.contentType) } catch {
            invariant(false, "a form built from parsed parts does not parse: \(error)")
            return
        }
        invariant(reparsed.count == form.parts.count, "\(form.parts.count) parts encoded, \(reparsed.count) parsed")
        for (sent, received) in zip(form.parts, reparsed) {
            invariant(sent == received, "part \(sent.name) changed in a round trip")
        }
    }

    /// Letters, digits and `'()+_,-./:=?` — RFC 2046's boundary characters, without the space.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: Array("'()+_,-./:=?".utf8).contains(byte)
        }
    }

    /// Text a header value carries unchanged: printable ASCII without quotes, backslashes,
    /// semicolons, leading or trailing spaces.
    static func isPlain(_ text: String) -> Bool {
        text.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") && $0 != UInt8(ascii: ";") }
            && text.first != " " && text.last != " "
    }

    /// Whether `needle` occurs in `haystack`.
    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, haystack.count >= needle.count else { return false }
        return (0...(haystack.count - needle.count)).contains { start in haystack[start..<(start + needle.count)].elementsEqual(needle) }
    }
}
