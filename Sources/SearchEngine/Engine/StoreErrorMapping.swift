import VisualSearch

extension VisualSearchError {
    /// A store's failure as the request's error: the one place the storage
    /// layer's ``CatalogStoreError`` becomes what the engine answers (and the
    /// server turns into HTTP through ``httpStatus``).
    public init(_ error: CatalogStoreError) {
        switch error {
        case .notFound(let location): self = .catalogNotFound(location: location)
        case .unusable(let location, let reason): self = .catalog(location: location, reason: reason)
        case .readOnlySnapshot(let location): self = .catalog(location: location, reason: CatalogStoreError.readOnlySnapshotReason)
        case .unavailable(let location, let reason): self = .unavailable(location: location, reason: reason)
        case .statement(let reason, let sql): self = .storage(reason: reason, sql: sql)
        case .unknownField(let field, let known): self = .unknownField(field, known: known)
        case .invalidValue(let name, let reason): self = .invalidParameter(name: name, reason: reason)
        case .invalidMetadata(let row, let field, let reason): self = .invalidMetadata(row: row, field: field, reason: reason)
        }
    }
}

/// Runs a store call for the engine: its failure comes back as the request's
/// error (``VisualSearchError/init(_:)``).
///
/// ```swift
/// let count = try await fromStore { () async throws(CatalogStoreError) in try await catalog.count() }
/// ```
package func fromStore<T>(_ body: () async throws(CatalogStoreError) -> T) async throws(VisualSearchError) -> T {
    do { return try await body() } catch { throw VisualSearchError(error) }
}
