import Foundation
import SearchEngine

/// The PostgreSQL server the tests use: `$VSEARCH_TEST_POSTGRES`, a URL to a
/// database with pgvector that `scripts/test.sh` starts (scripts/postgres.sh).
/// Every store under test gets its own schema, so tests run in parallel
/// without seeing each other.
public enum PostgreSQLTestDatabase {
    /// The server's URL, when one is configured.
    public static var url: String? {
        ProcessInfo.processInfo.environment["VSEARCH_TEST_POSTGRES"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Whether PostgreSQL tests run: when a server is configured, and always
    /// in CI, where a missing one fails them instead of skipping.
    public static var isRequired: Bool { url != nil || ProcessInfo.processInfo.environment["CI"] == "true" }

    /// A URL for a new, empty schema (`t_` and random hex) in the test database,
    /// with small pools (the suites open many at once) and a generous connect
    /// timeout (a loaded CI machine is slow to hand out connections).
    public static func freshURL(_ extra: String = "&pool_size=3&connect_timeout=30") throws -> String {
        guard let url else {
            throw Missing()
        }
        let schema = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
        return url + (url.contains("?") ? "&" : "?") + "schema=\(schema)" + extra
    }

    /// Settings for a new, empty schema.
    public static func freshSchema() throws -> PostgreSQLSettings {
        try PostgreSQLSettings(url: try freshURL())
    }

    /// `$VSEARCH_TEST_POSTGRES` is not set.
    public struct Missing: Error, CustomStringConvertible {
        public var description: String {
            "no PostgreSQL test server: run the tests with scripts/test.sh, or start one with scripts/postgres.sh start "
                + "and set VSEARCH_TEST_POSTGRES to the URL it prints"
        }
    }
}
