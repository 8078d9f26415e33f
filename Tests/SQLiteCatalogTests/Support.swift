import Foundation
import TestSupport

/// Runs an external command (found on the PATH) and returns its standard output, trimmed.
@discardableResult
func run(_ executable: String, _ arguments: [String]) async throws -> String {
    let outcome = try await ChildProcess.run("/usr/bin/env", [executable] + arguments)
    return outcome.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
}

/// Whether the tests that look at or make SQLite files behind the store's
/// back with the `sqlite3` command line tool run: when it is installed, and
/// always in CI (`scripts/install-deps.sh` installs it there; a missing tool
/// fails those tests instead of skipping them).
let hasSQLiteTool = ProcessInfo.processInfo.environment["CI"] == "true"
    || ["/usr/bin/sqlite3", "/usr/local/bin/sqlite3", "/opt/homebrew/bin/sqlite3"].contains { FileManager.default.isExecutableFile(atPath: $0) }
