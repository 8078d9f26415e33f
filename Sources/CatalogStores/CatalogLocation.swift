import Foundation
import Networking
import PostgreSQLCatalog
import SQLiteCatalog
import SearchEngine
import Tracking
import VisualSearch

/// Where a catalog is, as `--catalog` and `$VSEARCH_CATALOG` name it: a
/// SQLite file path, or a `postgresql://` URL.
///
/// ```swift
/// let location = CatalogLocation(parsing: "demo-output/catalog.sqlite")
/// let count = try await location.withCatalog { opened in   // refuses a missing catalog
///     try await opened.store.imageCount()
/// }   // a database's connection pool is closed here
/// ```
public enum CatalogLocation: Sendable, Hashable, CustomStringConvertible {
    /// A SQLite file (the embedded default).
    case sqlite(path: String)
    /// A PostgreSQL database URL (see ``PostgreSQLSettings`` for its parameters).
    case postgreSQL(URL)

    /// `.vsearch/catalog.sqlite` in the working directory.
    public static let defaultPath = ".vsearch/catalog.sqlite"

    /// Reads a location: `postgresql://…` or `postgres://…` is a database, anything else a file path.
    public init(parsing text: String) {
        let lower = text.lowercased()
        if lower.hasPrefix("postgresql://") || lower.hasPrefix("postgres://"), let url = URL(string: text) {
            self = .postgreSQL(url)
        } else {
            self = .sqlite(path: text)
        }
    }

    /// `$VSEARCH_CATALOG`, else ``defaultPath``.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> CatalogLocation {
        if let text = environment["VSEARCH_CATALOG"], !text.isEmpty { return CatalogLocation(parsing: text) }
        return .sqlite(path: defaultPath)
    }

    /// For messages: the path, or the URL without its password.
    public var description: String {
        switch self {
        case .sqlite(let path): path
        case .postgreSQL(let url): (try? PostgreSQLSettings(url: url.absoluteString))?.description ?? Redaction.url(url)
        }
    }

    /// Runs `body` with the catalog opened: the store in every role, its
    /// candidate source, where uploads are cached. A database's connection
    /// pool runs in this scope for as long as `body` does (the scope owns it,
    /// PostgresNIO's rule), so a server serves inside `body`. Only `creating`
    /// (`vsearch index`, `catalog migrate`, the vector-loading debug commands) makes a new catalog.
    /// - Throws: ``CatalogStoreError/notFound(location:)`` for a missing
    ///   catalog, ``CatalogStoreError/unusable(location:reason:)`` for one that cannot be used,
    ///   ``CatalogStoreError/unavailable(location:reason:)`` for a database that cannot be reached;
    ///   and what `body` throws.
    public func withCatalog<Result>(creating: Bool = false, _ body: (OpenedCatalog) async throws -> Result) async throws -> Result {
        switch self {
        case .sqlite(let path):
            return try await body(OpenedCatalog(sqlite: try await SQLiteCatalogStore(path: path, creating: creating)))
        case .postgreSQL(let url):
            return try await PostgreSQLCatalogStore.withStore(try PostgreSQLSettings(url: url.absoluteString), creating: creating) { store in
                try await body(OpenedCatalog(postgreSQL: store))
            }
        }
    }
}
