import Foundation
import Networking
import PostgreSQLCatalog
import SQLiteCatalog
import SearchEngine
import ServiceLifecycle
import Tracking
import VisualSearch

/// Where a catalog is, as `--catalog` and `$VSEARCH_CATALOG` name it: a
/// SQLite file path, or a `postgresql://` URL.
///
/// ```swift
/// let location = CatalogLocation(parsing: "demo-output/catalog.sqlite")
/// let store = try await location.open(creating: false)   // refuses a missing catalog
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

    /// Opens the store. Only `creating` (`vsearch index`, `catalog migrate`, the vector-loading debug commands) makes a new catalog.
    /// - Throws: ``VisualSearchError/catalogNotFound(location:)`` for a missing
    ///   catalog, ``VisualSearchError/catalog(location:reason:)`` for one that cannot be used,
    ///   ``VisualSearchError/unavailable(location:reason:)`` for a database that cannot be reached.
    public func open(creating: Bool = false) async throws(VisualSearchError) -> any CatalogStore & CollectorStore {
        try await openCatalog(creating: creating).store
    }

    /// Opens the store with what an engine and a server need beside it: its
    /// candidate source, where uploads are cached, and the services that
    /// must outlive a server's requests.
    public func openCatalog(creating: Bool = false) async throws(VisualSearchError) -> OpenedCatalog {
        switch self {
        case .sqlite(let path):
            return OpenedCatalog(sqlite: try await SQLiteCatalogStore(path: path, creating: creating))
        case .postgreSQL(let url):
            return OpenedCatalog(postgreSQL: try await PostgreSQLCatalogStore.open(try PostgreSQLSettings(url: url.absoluteString), creating: creating))
        }
    }
}
