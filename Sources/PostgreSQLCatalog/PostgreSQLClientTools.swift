import Foundation
import SearchEngine
import Subprocess
#if canImport(System)
import System
#else
import SystemPackage
#endif

/// PostgreSQL's own client programs (`pg_dump`, `pg_restore`), found and
/// run for a catalog: connected through libpq's environment variables
/// (`PGHOST`, `PGPORT`, `PGUSER`, `PGDATABASE`, `PGSSLMODE`, and `PGPASSWORD`
/// when the catalog has a password), so no URL and no password is ever on a
/// command line (where `ps` shows it) or in a message. Each program is
/// awaited through swift-subprocess with both of its pipes drained.
struct PostgreSQLClientTools: Sendable {
    /// The environment variable that names a program's path, overriding the search.
    static func overrideVariable(for tool: String) -> String { "VSEARCH_" + tool.uppercased() }

    /// How to get the client programs, for ``BackupError/toolMissing(tool:fix:)``.
    static func installHint(_ tool: String) -> String {
        "install PostgreSQL's client programs of the server's major version or newer (Debian: apt install postgresql-client; "
            + "for a newer server, the PGDG packages postgresql-client-NN), or set $\(overrideVariable(for: tool)) to the program's path"
    }

    /// Where `tool` is: `$VSEARCH_<TOOL>`, else beside `near` (pg_restore beside the pg_dump used), else the first on `PATH`.
    static func locate(_ tool: String, near: String? = nil, environment: [String: String]) -> String? {
        if let path = environment[overrideVariable(for: tool)], !path.isEmpty {
            return FileManager.default.isExecutableFile(atPath: path) ? path : nil
        }
        var folders = (environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":").map(String.init)
        if let near { folders.insert((near as NSString).deletingLastPathComponent, at: 0) }
        return folders.map { $0 + "/" + tool }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// libpq's variables for `settings` (the password only when there is one).
    static func connectionEnvironment(_ settings: PostgreSQLSettings) -> [String: String] {
        var variables = ["PGHOST": settings.host, "PGPORT": String(settings.port), "PGUSER": settings.user, "PGDATABASE": settings.database,
                         "PGSSLMODE": settings.tls.rawValue, "PGCONNECT_TIMEOUT": String(max(2, Int(settings.connectTimeout.rounded(.up)))),
                         "PGAPPNAME": settings.applicationName]
        if let password = settings.password { variables["PGPASSWORD"] = password }
        return variables
    }

    /// What a program printed and how it ended.
    struct Outcome: Sendable {
        var succeeded: Bool
        /// "exit status 1", "signal 9".
        var status: String
        var stdout: String
        var stderr: String
    }

    /// The most a program's stream is kept (pg_dump without --verbose prints a few lines).
    static let outputLimit = 8 << 20

    /// Runs `executable` with `arguments`, `environment` added to this process's.
    static func run(_ executable: String, _ arguments: [String], environment: [String: String]) async throws -> Outcome {
        var updates: [Environment.Key: String?] = [:]
        for (key, value) in environment { updates[Environment.Key(stringLiteral: key)] = value }
        let result = try await Subprocess.run(.path(FilePath(executable)), arguments: Arguments(arguments),
                                              environment: .inherit.updating(updates),
                                              output: .string(limit: outputLimit), error: .string(limit: outputLimit))
        let status: String, succeeded: Bool
        switch result.terminationStatus {
        case .exited(let code): (status, succeeded) = ("exit status \(code)", code == 0)
        case .signaled(let signal): (status, succeeded) = ("signal \(signal)", false)
        }
        return Outcome(succeeded: succeeded, status: status, stdout: result.standardOutput, stderr: result.standardError)
    }

    /// The last lines of a program's message, for an error.
    static func tail(_ text: String, lines: Int = 6) -> String {
        text.split(separator: "\n").suffix(lines).joined(separator: " | ")
    }
}
