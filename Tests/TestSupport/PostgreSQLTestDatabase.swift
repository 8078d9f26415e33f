import Foundation
import SearchEngine
import PostgreSQLCatalog

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

/// A PostgreSQL server of a test's own (scripts/postgres.sh with its own
/// `VSEARCH_PG_BASE`), for tests that stop and start the server — which
/// the shared one must never do under the other suites.
public struct PrivatePostgreSQLServer: Sendable {
    /// Its data lives here (removed by ``remove()``).
    public let base: String
    /// `postgresql://postgres@127.0.0.1:PORT/vsearch_test`.
    public let url: String

    /// Makes and starts a new cluster (initdb, a few seconds).
    public static func start() async throws -> PrivatePostgreSQLServer {
        let base = "/tmp/vsearch-pg-private-" + UUID().uuidString.prefix(8).lowercased()
        let url = try await script(["start"], base: base).trimmingCharacters(in: .whitespacesAndNewlines)
        return PrivatePostgreSQLServer(base: base, url: url)
    }

    /// `pg_ctl stop -m fast`: every connection is closed, the server is down.
    public func stop() async throws { _ = try await Self.script(["pgctl", "stop", "-m", "fast", "-w"], base: base) }
    /// `pg_ctl start`: the same data directory and port.
    public func restart() async throws { _ = try await Self.script(["pgctl", "start", "-w"], base: base) }
    /// Stops the server and deletes its data.
    public func remove() async {
        _ = try? await Self.script(["stop"], base: base)
        try? FileManager.default.removeItem(atPath: base)
    }

    /// Runs scripts/postgres.sh with this server's base; returns stdout.
    ///
    /// Output goes to files, not pipes (``ChildProcess/runToFiles(_:_:environment:stdout:stderr:)``):
    /// the server that `start` leaves running would inherit a pipe's write end
    /// and keep it open, so reading the pipe to its end would wait for as long as PostgreSQL runs.
    @discardableResult
    static func script(_ arguments: [String], base: String) async throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vsearch-pg-script-" + UUID().uuidString)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let outcome = try await ChildProcess.runToFiles(Repository.root + "/scripts/postgres.sh", arguments, environment: ["VSEARCH_PG_BASE": base],
                                                        stdout: folder.appendingPathComponent("stdout").path,
                                                        stderr: folder.appendingPathComponent("stderr").path)
        guard outcome.status == 0 else { throw ScriptFailed(arguments: arguments, status: outcome.status, stderr: outcome.stderr) }
        return outcome.stdout
    }

    /// scripts/postgres.sh failed.
    public struct ScriptFailed: Error, CustomStringConvertible {
        public let arguments: [String]
        public let status: Int32
        public let stderr: String
        public var description: String { "scripts/postgres.sh \(arguments.joined(separator: " ")) exited \(status): \(stderr)" }
    }
}
