import Foundation
import GRDB
import SQLiteCatalog
import Testing

/// What `vsearch` prints cannot drive the terminal: event fields and catalog
/// values with control characters or bidi overrides come out as visible
/// escapes in the text tables, and as JSON escapes (still valid JSON) with `--json`.
@Suite("Terminal output of untrusted values", .serialized)
struct TerminalOutputCLITests {
    typealias CLI = CLITests

    /// Whether `text` holds a character a terminal would act on: a C0 control other than LF, DEL, a C1 control, a bidi control.
    static func unsafe(_ text: String) -> [String] {
        text.unicodeScalars.filter { scalar in
            switch scalar.value {
            case 0x0A: false
            case 0x00...0x1F, 0x7F...0x9F, 0x061C, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: true
            default: false
            }
        }.map { String(format: "U+%04X", $0.value) }
    }

    @Test("events stats: a pid with ESC, BEL, CR/LF, C1 and U+202E (a query id with NUL) prints escaped, on its own row; --json round-trips it; track refuses control characters")
    func eventsStats() async throws {
        let catalog = CLI.temporaryDirectory() + "/catalog.sqlite"
        _ = try await SQLiteCatalogStore(path: catalog, creating: true)
        // The collector now refuses control characters…
        let refused = try await CLI.run(["track", "product_click", "--query-id", "q\u{1B}]0;pwned\u{07}", "--pid", "p", "--im-url", "https://shop.example/p.jpg",
                                         "--pos", "1", "--catalog", catalog])
        #expect(refused.status == 64 && refused.stderr.contains("control character"), "\(refused.status) \(refused.stderr)")
        #expect(Self.unsafe(refused.stderr).isEmpty, "the refusal quotes the value escaped: \(Self.unsafe(refused.stderr))")
        // …but takes a bidi override (right-to-left text); and a catalog may hold events stored before the rule.
        let bidi = try await CLI.run(["track", "product_click", "--query-id", "q1", "--pid", "evil\u{202E}gnp.exe", "--im-url", "https://shop.example/p.jpg",
                                      "--pos", "1", "--catalog", catalog])
        #expect(bidi.status == 0, "\(bidi.stderr)")
        // (NUL goes in the query id: SQLite hands text back up to its first NUL.)
        let hostile = "shoe\u{1B}]0;pwned\u{07}\u{1B}[2J\r\nforged      99      99      0      0   100.0%   0.0%\u{9B}x\u{202E}"
        let queue = try DatabaseQueue(path: catalog)
        try await queue.write { db in
            for (index, action) in ["product_view", "product_click"].enumerated() {
                try db.execute(sql: """
                    INSERT INTO tracking_events (event_id, action, query_id, pid, ts, received_at, payload) VALUES (?, ?, ?, ?, ?, ?, '{}')
                    """, arguments: ["old\(index)", action, "q\u{1B}[31m\u{0}", hostile, Int64(Date().timeIntervalSince1970 * 1000), 0])
            }
        }
        let table = try await CLI.run(["events", "stats", "--catalog", catalog])
        #expect(table.status == 0, "\(table.stderr)")
        #expect(Self.unsafe(table.stdout).isEmpty, "raw in the table: \(Self.unsafe(table.stdout))\n\(table.stdout)")
        #expect(table.stdout.contains(#"shoe\u001b]0;pwned\u0007\u001b[2J\r\nforged"#), "\(table.stdout)")
        #expect(table.stdout.contains(#"evil\u202egnp.exe"#), "\(table.stdout)")
        #expect(!table.stdout.split(separator: "\n").contains { $0.hasPrefix("forged") }, "no forged row: \(table.stdout)")
        let json = try await CLI.run(["events", "stats", "--catalog", catalog, "--json"])
        #expect(Self.unsafe(json.stdout).isEmpty, "raw in the JSON: \(Self.unsafe(json.stdout))")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let keys = (object["products"] as? [[String: Any]] ?? []).compactMap { $0["key"] as? String }
        #expect(keys.contains(hostile) && keys.contains("evil\u{202E}gnp.exe"), "the JSON escapes mean the same characters: \(keys)")
    }
}
