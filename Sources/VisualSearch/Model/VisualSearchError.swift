import ImageOps

/// Everything that can go wrong in VisualSearch, with the context to act on
/// it. ``message`` is what a ViSearch-style response puts in its `error`
/// array; ``description`` adds the detail a developer needs.
///
/// ```swift
/// do { _ = try engine.similar(to: "nope", parameters: .init()) }
/// catch { print(error) } // Image not found with im_name: nope
/// ```
public enum VisualSearchError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A request parameter is missing or malformed (HTTP 400).
    case invalidParameter(name: String, reason: String)
    /// An fq, facet or fl names a field the catalog schema does not declare (HTTP 400).
    case unknownField(String)
    /// No image with that im_name (or product id) is in the catalog (HTTP 404 on the wire, as "Image not found").
    case imageNotFound(String)
    /// An uploaded or indexed image could not be used.
    case image(ImageOpsError)
    /// A metadata row does not fit the schema.
    case invalidMetadata(row: Int, field: String, reason: String)
    /// The catalog file cannot be used (corrupt, foreign, unwritable...).
    case catalog(path: String, reason: String)
    /// An SQL statement failed; `sql` is the statement, never with user values inlined.
    case storage(reason: String, sql: String?)

    /// The message clients see in the response's `error` list.
    public var message: String {
        switch self {
        case .invalidParameter(let name, let reason): "Invalid parameter \(name): \(reason)"
        case .unknownField(let field): "Unknown field \(field): not in the catalog schema"
        case .imageNotFound: "Image not found with im_name."
        case .image(let error): "Invalid image: \(error.description)"
        case .invalidMetadata(let row, let field, let reason): "Invalid metadata in row \(row), field \(field): \(reason)"
        case .catalog(let path, let reason): "Catalog \(path): \(reason)"
        case .storage(let reason, _): "Storage error: \(reason)"
        }
    }

    /// The HTTP status a server answers with.
    public var httpStatus: Int {
        switch self {
        case .invalidParameter, .unknownField, .image, .invalidMetadata: 400
        case .imageNotFound: 404
        case .catalog, .storage: 500
        }
    }

    public var description: String {
        switch self {
        case .imageNotFound(let name): "Image not found with im_name: \(name)"
        case .storage(let reason, let sql): sql.map { "\(reason) (SQL: \($0))" } ?? reason
        default: message
        }
    }
}
