import SearchEngine
import Foundation
import Networking
import VisualSearch

/// How to reach a PostgreSQL catalog, read from a `postgresql://` URL the way
/// libpq reads it, plus vsearch's own settings.
///
/// ```text
/// postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE?sslmode=require&schema=shop&ef_search=100
/// ```
///
/// - The password comes from the URL, else `$PGPASSWORD`, else the password
///   file (`$PGPASSFILE` or `~/.pgpass`, `host:port:database:user:password`
///   lines with `*` wildcards). It is never part of ``description``.
/// - `sslmode`: `disable`, `allow`/`prefer` (the default: TLS when the server
///   offers it), `require` (TLS, certificate not checked), `verify-ca`,
///   `verify-full` (TLS with the system's trust roots).
/// - `connect_timeout` (seconds, default 5): how long a connection attempt,
///   and any statement waiting for a connection, may take before the
///   catalog is reported unavailable (HTTP 503, exit 69).
/// - `schema` (default `public`): the PostgreSQL schema holding the
///   catalog's tables, so several catalogs can share one database.
/// - `knn` (default `auto`): how k-NN runs — `exact` (a scan of every
///   candidate: recall 1, cost linear in the candidates), `approximate` (the
///   HNSW index, with pgvector's iterative scan when there are filters) or
///   `auto`: exact when the filters leave at most `exact_below` images
///   (default 1000) or too few for the index's iterative scan to fill a page
///   (under ~0.4 % of the catalog for a page of 10), when a score range is
///   asked for, or when a page reaches deeper than 1000 results; the index
///   otherwise. See docs/decisions.md.
/// - `ef_search` (default 100): pgvector's `hnsw.ef_search`, the candidate
///   list of an approximate query; deeper pages continue by iterative scan
///   (up to pgvector's 20 000 rows: `knn=approximate` pages past that come
///   back short, which `auto` avoids by scanning exactly past 1000 results).
/// - `pool_size` (default 10): the most connections one process opens.
/// - `application_name` is passed on to the server.
public struct PostgreSQLSettings: Sendable, Hashable, CustomStringConvertible {
    /// How k-NN queries use the HNSW index (one vocabulary with the embedded store's).
    public typealias NearestNeighbourMode = VisualSearch.NearestNeighbourMode

    /// TLS, as libpq's `sslmode` names it.
    public enum TLSMode: String, Sendable, Hashable, CaseIterable {
        case disable, allow, prefer, require
        case verifyCA = "verify-ca"
        case verifyFull = "verify-full"
    }

    public var host: String
    public var port: Int
    public var user: String
    public var password: String?
    public var database: String
    public var tls: TLSMode = .prefer
    /// The PostgreSQL schema holding the catalog's tables.
    public var schema = "public"
    /// Seconds a connection attempt (or a wait for one) may take.
    public var connectTimeout: Double = 5
    public var poolSize = 10
    public var applicationName = "vsearch"
    /// How k-NN queries run.
    public var nearestNeighbours: NearestNeighbourMode = .auto
    /// pgvector's `hnsw.ef_search` for approximate queries.
    public var efSearch = 100
    /// In `auto`, the most images a filter may leave for the exact scan.
    public var exactBelow = 1000

    /// The query parameters a URL may carry.
    public static let knownParameters = ["sslmode", "connect_timeout", "schema", "pool_size", "application_name",
                                         "knn", "ef_search", "exact_below"]

    /// Reads a `postgresql://` or `postgres://` URL.
    /// - Parameter environment: where `PGPASSWORD`, `PGPASSFILE`, `PGUSER` and `HOME` are read.
    /// - Throws: ``CatalogStoreError/unusable(location:reason:)`` naming what is wrong, without the password.
    public init(url text: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws(CatalogStoreError) {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
              scheme == "postgresql" || scheme == "postgres" else {
            throw .unusable(location: Redaction.url(text), reason: "not a postgresql:// URL")
        }
        let shown = components.url.map(Redaction.url) ?? Redaction.url(text)
        host = components.host.flatMap { $0.isEmpty ? nil : $0 } ?? "localhost"
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        port = components.port ?? 5432
        user = components.user.flatMap { $0.removingPercentEncoding }.flatMap { $0.isEmpty ? nil : $0 }
            ?? environment["PGUSER"] ?? environment["USER"] ?? "postgres"
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        database = (path.removingPercentEncoding ?? path).isEmpty ? user : (path.removingPercentEncoding ?? path)
        for item in components.queryItems ?? [] {
            let value = item.value ?? ""
            func number<T: LosslessStringConvertible & Comparable>(_ type: T.Type, at least: T) throws(CatalogStoreError) -> T {
                guard let parsed = T(value), parsed >= least else {
                    throw .unusable(location: shown, reason: "\(item.name)=\(value) is not a number of at least \(least)")
                }
                return parsed
            }
            switch item.name {
            case "sslmode":
                guard let mode = TLSMode(rawValue: value) else {
                    throw .unusable(location: shown, reason: "sslmode=\(value) is not one of \(TLSMode.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                tls = mode
            case "connect_timeout": connectTimeout = max(1, try number(Double.self, at: 0))
            case "schema":
                guard !value.isEmpty, value.utf8.count <= 63 else { throw .unusable(location: shown, reason: "schema= needs a name of 1 to 63 bytes") }
                schema = value
            case "pool_size": poolSize = try number(Int.self, at: 1)
            case "application_name": applicationName = value
            case "knn":
                guard let mode = NearestNeighbourMode(rawValue: value) else {
                    throw .unusable(location: shown, reason: "knn=\(value) is not one of \(NearestNeighbourMode.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                nearestNeighbours = mode
            case "ef_search": efSearch = min(try number(Int.self, at: 1), 1000)
            case "exact_below": exactBelow = try number(Int.self, at: 0)
            default:
                throw .unusable(location: shown, reason: "unknown URL parameter \(item.name) (known: \(Self.knownParameters.joined(separator: ", ")))")
            }
        }
        password = components.password.flatMap { $0.removingPercentEncoding }
            ?? environment["PGPASSWORD"]
            ?? Self.passwordFile(environment).flatMap { PasswordFile.password(in: $0, host: host, port: port, database: database, user: user) }
    }

    static func passwordFile(_ environment: [String: String]) -> String? {
        let path = environment["PGPASSFILE"] ?? environment["HOME"].map { $0 + "/.pgpass" }
        return path.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) }
    }

    /// The URL without its password, for messages and logs.
    public var description: String {
        var text = "postgresql://\(user)@\(host.contains(":") ? "[\(host)]" : host):\(port)/\(database)"
        if schema != "public" { text += "?schema=\(schema)" }
        return text
    }

    /// The deepest result an approximate query serves in `auto`; deeper pages scan exactly.
    public static let approximateDepth = 1000

    /// The most rows pgvector's iterative scan visits (`hnsw.max_scan_tuples`, its default).
    public static let iterativeScanRows = 20_000

    /// Whether a k-NN query needing `count` results, over a scope holding
    /// `matching` of the catalog's `catalogSize` images, scans exactly
    /// (rather than through the HNSW index). In `auto`: exactly for a score
    /// range, a page deeper than ``approximateDepth``, a scope of at most
    /// `exact_below` images, or a filter so selective that the iterative scan
    /// would meet fewer than four times `count` matches in the rows it may
    /// visit (``iterativeScanRows``) — a short page from the index.
    public func scansExactly(count: Int, matching: Int, catalogSize: Int, scoreRange: Bool) -> Bool {
        switch nearestNeighbours {
        case .exact: return true
        case .approximate: return false
        case .auto:
            if scoreRange || count > Self.approximateDepth || matching <= exactBelow { return true }
            let expectedMatches = Double(matching) / Double(max(1, catalogSize)) * Double(Self.iterativeScanRows)
            return expectedMatches < Double(4 * count)
        }
    }

    /// The catalog schema as a quoted SQL identifier.
    var quotedSchema: String { "\"" + schema.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
}

/// libpq's password file: `hostname:port:database:username:password` per
/// line, `*` matching anything, `\:` and `\\` escaping; the first match wins.
enum PasswordFile {
    static func password(in text: String, host: String, port: Int, database: String, user: String) -> String? {
        for line in text.split(whereSeparator: \.isNewline) where !line.hasPrefix("#") {
            let fields = split(String(line))
            guard fields.count == 5 else { continue }
            let wanted = [host, String(port), database, user]
            if zip(fields.prefix(4), wanted).allSatisfy({ $0 == "*" || $0 == $1 }) { return fields[4] }
        }
        return nil
    }

    /// Splits on unescaped colons, unescaping `\:` and `\\`.
    static func split(_ line: String) -> [String] {
        var fields: [String] = [], current = "", escaped = false
        for character in line {
            if escaped { current.append(character); escaped = false }
            else if character == "\\" { escaped = true }
            else if character == ":" { fields.append(current); current = "" }
            else { current.append(character) }
        }
        fields.append(current)
        return fields
    }
}
