import ArgumentParser
import Foundation
import Tracking
import VisualSearch

/// `vsearch events stats`: what the local collector has seen.
struct EventsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "Analytics collected by `vsearch serve` (or `vsearch track --catalog`).",
        subcommands: [Stats.self]
    )

    struct Stats: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Views, clicks, add-to-carts, transactions, CTR and conversion per query and per im_name.",
            discussion: """
            views = view + product_view; clicks = click + product_click; CTR = clicks / views; \
            conversion = transactions / clicks. --since takes 30m, 24h, 7d or a date (2026-11-01 or ISO 8601).
            """
        )
        @OptionGroup var catalog: CatalogOptions
        @Option(help: ArgumentHelp("Only events at or after this.", valueName: "24h|7d|date")) var since: String?
        @Option(help: "Rows per table.") var limit = 20
        @Flag(help: "Print the stats as JSON.") var json = false

        func validate() throws {
            if let since, StatsWindow.start(since, now: Date()) == nil {
                throw ValidationError("--since \"\(since)\" is not \(StatsWindow.forms)")
            }
            guard limit >= 1 else { throw ValidationError("--limit must be at least 1") }
        }

        func run() async throws {
            let stats: EventStats
            do {
                stats = try await catalog.withStoreUnreported { store in
                    try await store.stats(since: since.flatMap { StatsWindow.start($0, now: Date()) }, limit: limit)
                }
            } catch {
                throw CLIError.report(error)
            }
            if json { Terminal.json(stats); return }
            Terminal.out("\(stats.total) events" + (stats.actions.isEmpty ? "" : ": " + stats.actions.sorted { $0.key < $1.key }
                .map { "\(TerminalText.escaped($0.key)) \($0.value)" }.joined(separator: ", ")))
            for (title, rows) in [("query", stats.queries), ("im_name", stats.products)] where !rows.isEmpty {
                Terminal.out("")
                Terminal.out(Self.table(title, rows))
            }
        }

        /// The rows as an aligned table; keys (a query id, a pid: whatever the events carried) escaped for the terminal.
        static func table(_ title: String, _ rows: [EventStats.Row]) -> String {
            let percent = { (value: Double?) in value.map { String(format: "%.1f%%", $0 * 100) } ?? "-" }
            let keys = rows.map { TerminalText.escaped($0.key) }
            let width = max(title.count, keys.map(\.count).max() ?? 0)
            let pad = { (text: String, count: Int) in text + String(repeating: " ", count: max(0, count - text.count)) }
            var lines = [pad(title, width) + "   views  clicks   carts  trans      CTR   conv"]
            for (row, key) in zip(rows, keys) {
                let left = { (text: String, count: Int) in String(repeating: " ", count: max(0, count - text.count)) + text }
                lines.append(pad(key, width) + String(format: " %7d %7d %7d %6d ", row.views, row.clicks, row.addToCarts, row.transactions)
                             + left(percent(row.clickThroughRate), 8) + " " + left(percent(row.conversion), 6))
            }
            return lines.joined(separator: "\n")
        }
    }
}
