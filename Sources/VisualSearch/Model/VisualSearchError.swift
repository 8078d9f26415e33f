import ImageOps

/// Everything that can go wrong answering a ViSearch or ProductSearch
/// request, with the context to act on it. ``message`` is what a
/// ViSearch-style response puts in its `error` array; ``description`` adds
/// the detail a developer needs. Neither ever holds a secret or the bytes of
/// a file or a response.
///
/// ```swift
/// do { _ = try await engine.search(SearchRequest(imageName: "nope")) }
/// catch { print(error) } // Image not found with im_name: nope
/// ```
public enum VisualSearchError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A request parameter is missing or malformed (HTTP 400).
    case invalidParameter(name: String, reason: String)
    /// An fq, facet or fl names a field the catalog schema does not declare (HTTP 400); `known` lists the declared ones.
    case unknownField(String, known: [String])
    /// No image with that im_name (or product id) is in the catalog (HTTP 404 on the wire, as "Image not found").
    case imageNotFound(String)
    /// An uploaded, fetched or indexed image could not be used.
    case image(ImageOpsError)
    /// An `im_url` could not be fetched, or may not be (HTTP 400); `url` has its secrets redacted.
    case fetch(url: String, reason: String)
    /// A metadata row does not fit the schema.
    case invalidMetadata(row: Int, field: String, reason: String)
    /// No catalog at this location (reading never creates one: an ``Indexer`` run or a catalog copy does).
    case catalogNotFound(location: String)
    /// The catalog cannot be used (corrupt, foreign, unwritable, unsupported…).
    case catalog(location: String, reason: String)
    /// A storage statement failed; `sql` is the statement, never with user values inlined.
    case storage(reason: String, sql: String?)
    /// The catalog's database cannot be reached right now (down, restarting,
    /// refusing connections): HTTP 503, worth retrying. `location` has no password.
    case unavailable(location: String, reason: String)
    /// The server has more work than it admits right now (its image work queue
    /// is full, or a request waited in it too long): HTTP 503 with
    /// `Retry-After: retryAfter` seconds, worth retrying then.
    case overloaded(reason: String, retryAfter: Int)
    /// Learned similarity was asked for and cannot answer (``LearnedModelProblem``
    /// says why); `reason` names the fix. HTTP 400, except a damaged model (500).
    case learnedModel(LearnedModelProblem, reason: String)

    /// Why learned similarity cannot answer.
    public enum LearnedModelProblem: String, Sendable, Hashable, Codable {
        /// The model (or ONNX Runtime) is not installed for this process.
        case missing
        /// The model's files are there but unusable (checksum, format, shape).
        case damaged
        /// Another model made the catalog's learned vectors.
        case mismatch
        /// The catalog (or the image asked about) holds no learned vectors.
        case notIndexed
    }

    /// Why a field is unknown, naming the fields the schema declares (the engine's and the store's words alike).
    public static func notInSchema(known: [String]) -> String {
        "not in the catalog schema" + (known.isEmpty ? " (it declares no fields)" : " (fields: \(known.joined(separator: ", ")))")
    }

    /// The message clients see in the response's `error` list.
    public var message: String {
        switch self {
        case .invalidParameter(let name, let reason): "Invalid parameter \(name): \(reason)"
        case .unknownField(let field, let known):
            "Unknown field \(field): " + Self.notInSchema(known: known)
        case .imageNotFound: "Image not found with im_name."
        case .image(let error): "Invalid image: \(error.description)"
        case .fetch(let url, let reason): "Invalid parameter im_url: cannot fetch \(url): \(reason)"
        case .invalidMetadata(let row, let field, let reason): "Invalid metadata in row \(row), field \(field): \(reason)"
        case .catalogNotFound(let location): "No catalog at \(location)"
        case .catalog(let location, let reason): "Catalog \(location): \(reason)"
        case .storage(let reason, _): "Storage error: \(reason)"
        case .unavailable(let location, let reason): "Catalog unavailable at \(location): \(reason)"
        case .overloaded(let reason, let retryAfter): "Server busy: \(reason); retry in \(retryAfter) s"
        case .learnedModel(_, let reason): "Learned similarity unavailable: \(reason)"
        }
    }

    /// The HTTP status a server answers with.
    public var httpStatus: Int {
        switch self {
        case .invalidParameter, .unknownField, .image, .invalidMetadata, .fetch: 400
        case .learnedModel(let problem, _): problem == .damaged ? 500 : 400
        case .imageNotFound: 404
        case .catalogNotFound, .catalog, .storage: 500
        case .unavailable, .overloaded: 503
        }
    }

    public var description: String {
        switch self {
        case .imageNotFound(let name): "Image not found with im_name: \(name)"
        case .catalogNotFound(let location):
            "no catalog at \(location); index images into it first (`vsearch index IMAGES_DIR --catalog \(location)` creates it), or open an existing catalog"
        case .storage(let reason, let sql): sql.map { "\(reason) (SQL: \($0))" } ?? reason
        default: message
        }
    }
}
