import VisualSearch

/// Why a catalog store refused or failed a call: the error of the store roles
/// (``CatalogReader``, ``CatalogWriter``, ``NearestNeighbourStore``,
/// ``InsertJournal``, ``CatalogAdmin``, ``CatalogSnapshots``) and of what
/// works on stores alone (``CatalogCopy``). It belongs to the storage layer,
/// as GRDB's `DatabaseError` and PostgresNIO's `PSQLError` belong to theirs:
/// a store turns its driver's error into one of these, the engine turns this
/// into the request's ``VisualSearchError`` (``VisualSearchError/init(_:)``,
/// the one place), and the server answers that. The client never sees it.
///
/// No case holds a password, a value a user sent inside a statement's text,
/// or the bytes of a file.
public enum CatalogStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No catalog at this location (reading never creates one).
    case notFound(location: String)
    /// The catalog cannot be used: corrupt, foreign, unwritable, its
    /// extension missing, the user or the password refused…; `reason` says what to do.
    case unusable(location: String, reason: String)
    /// A write through a read-only snapshot of the catalog (``CatalogSnapshots``).
    case readOnlySnapshot(location: String)
    /// The database cannot be reached right now (down, restarting, refusing
    /// connections, no connection in time): worth retrying. `location` has no password.
    case unavailable(location: String, reason: String)
    /// A statement failed; `sql` is its text, never with a user's values inlined (they are bound).
    case statement(reason: String, sql: String?)
    /// A filter or a facet names a field the catalog's schema does not declare; `known` lists the declared ones.
    case unknownField(String, known: [String])
    /// A value handed to the store cannot be stored or searched: a filter with
    /// no words, a vector of the wrong length; `name` is the request parameter it came from.
    case invalidValue(name: String, reason: String)
    /// A metadata row does not fit the store (row numbers count from 1).
    case invalidMetadata(row: Int, field: String, reason: String)

    /// Why a snapshot refuses a write, and what to write through instead.
    public static let readOnlySnapshotReason = "this is a read-only snapshot of the catalog; write through the catalog itself"

    public var description: String {
        switch self {
        case .notFound(let location): "no catalog at \(location)"
        case .unusable(let location, let reason): "catalog \(location): \(reason)"
        case .readOnlySnapshot(let location): "catalog \(location): \(Self.readOnlySnapshotReason)"
        case .unavailable(let location, let reason): "catalog unavailable at \(location): \(reason)"
        case .statement(let reason, let sql): sql.map { "\(reason) (SQL: \($0))" } ?? reason
        case .unknownField(let field, let known):
            "unknown field \(field): " + VisualSearchError.notInSchema(known: known)
        case .invalidValue(let name, let reason): "invalid \(name): \(reason)"
        case .invalidMetadata(let row, let field, let reason): "invalid metadata in row \(row), field \(field): \(reason)"
        }
    }
}

extension CatalogStoreError {
    /// The refusal to retype a field that images already have values for, naming the ways out.
    public static func retypeRefusal(field: String, current: String, requested: FieldType, imagesWithValues: Int) -> CatalogStoreError {
        .invalidValue(name: "schema", reason: "field \(field) is \(current) in this catalog and \(imagesWithValues) "
            + (imagesWithValues == 1 ? "image has" : "images have") + " a value for it, so it cannot become \(requested.rawValue); "
            + "remove them (`vsearch catalog remove`) or index into a new catalog")
    }
}

extension CatalogStoreError {
    /// A check of the request's own words that a store runs on what it was
    /// handed (a filter's number, a metadata row, a facet's fields): its
    /// refusal in the store's words. Only a refusal of the input is expected here.
    public init(refusing error: VisualSearchError) {
        switch error {
        case .invalidParameter(let name, let reason): self = .invalidValue(name: name, reason: reason)
        case .unknownField(let field, let known): self = .unknownField(field, known: known)
        case .invalidMetadata(let row, let field, let reason): self = .invalidMetadata(row: row, field: field, reason: reason)
        default: self = .invalidValue(name: "request", reason: error.message)
        }
    }
}

/// Runs a check of the request's own words inside a store; its refusal comes
/// back as the store's error (``CatalogStoreError/init(refusing:)``).
package func checkingInput<T>(_ body: () throws(VisualSearchError) -> T) throws(CatalogStoreError) -> T {
    do { return try body() } catch { throw CatalogStoreError(refusing: error) }
}
