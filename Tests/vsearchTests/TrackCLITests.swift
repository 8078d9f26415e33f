import Foundation
import Testing

/// `vsearch track` and `vsearch events stats`, run as a user would — and the
/// queue's promise under kill -9.
@Suite("vsearch track and events", .serialized)
struct TrackCLITests {
    typealias CLI = CLITests

    @Test("an invalid event exits 64 naming the field and the rule; nothing is queued")
    func invalid() async throws {
        let queue = CLI.temporaryDirectory() + "/queue.sqlite"
        let run = try await CLI.run(["track", "product_click", "--query-id", "1", "--pid", "p", "--img-url", "https://shop.example/p.jpg", "--pos", "0", "--no-send", "--queue", queue])
        #expect(run.status == 64 && run.stderr.contains("pos: 0 is below 1"))
        let currency = try await CLI.run(["track", "transaction", "--query-id", "1", "--transaction-id", "t", "--value", "3", "--currency", "EURO",
                                    "--no-send", "--queue", queue])
        #expect(currency.status == 64 && currency.stderr.contains("currency"))
    }

    @Test("offline: events queue up; track flush delivers them once the collector is up; events stats counts them")
    func offlineThenFlush() async throws {
        let catalog = EngineCLITests.catalogPath()
        try await EngineCLITests.indexCorpus(catalog)
        let queue = CLI.temporaryDirectory() + "/queue.sqlite"
        for (action, extra) in [("product_view", ["--pid", "chelsea_cat", "--im-url", "https://shop.example/p.jpg", "--pos", "1"]),
                                ("product_click", ["--pid", "chelsea_cat", "--im-url", "https://shop.example/p.jpg", "--pos", "1"]),
                                ("add_to_cart", ["--pid", "chelsea_cat", "--im-url", "https://shop.example/p.jpg", "--pos", "1"])] {
            let run = try await CLI.run(["track", action, "--query-id", "777"] + extra + ["--endpoint", "http://127.0.0.1:9", "--queue", queue])
            #expect(run.status == 0 && run.stdout.contains("still queued"), "\(run.stderr)")
        }
        let status = try await CLI.run(["track", "status", "--queue", queue, "--json"])
        let counters = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Int]
        #expect(counters?["queued"] == 3 && counters?["sent"] == 0)
        _ = try await ServeCLITests.serving(catalog) { url, server in
            let flush = try await CLI.run(["track", "flush", "--endpoint", url, "--queue", queue])
            #expect(flush.status == 0 && flush.stdout.contains("delivered 3; 0 still queued"))
            let stats = try await CLI.run(["events", "stats", "--catalog", catalog, "--json"])
            let object = try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Any]
            let query = (object?["queries"] as? [[String: Any]])?.first
            #expect(object?["total"] as? Int == 3 && query?["key"] as? String == "777" && query?["ctr"] as? Double == 1)
            let table = try await CLI.run(["events", "stats", "--catalog", catalog, "--since", "1h"])
            #expect(table.status == 0 && table.stdout.contains("chelsea_cat") && table.stdout.contains("100.0%"))
        }
    }

    @Test("kill -9 while tracking: every event whose track returned is delivered after a restart")
    func killNine() async throws {
        let queue = CLI.temporaryDirectory() + "/queue.sqlite"
        let (_, outcome) = try await CLI.withRunning(["debug", "track-load", "--count", "100000", "--queue", queue, "--echo"]) { load in
            _ = try await load.line(on: .stdout) { $0 == "queued 300" }
            load.signal(SIGKILL)
        }
        let confirmed = outcome.stdout.split(separator: "\n").filter { $0.hasPrefix("queued ") }.count
        #expect(outcome.signal == SIGKILL && confirmed >= 300 && confirmed < 100_000)

        let catalog = EngineCLITests.catalogPath()
        try await EngineCLITests.indexCorpus(catalog)
        _ = try await ServeCLITests.serving(catalog) { url, server in
            let flush = try await CLI.run(["track", "flush", "--endpoint", url, "--queue", queue, "--json"])
            let report = try JSONSerialization.jsonObject(with: Data(flush.stdout.utf8)) as? [String: Any]
            let sent = report?["sent"] as? Int ?? 0
            #expect(report?["remaining"] as? Int == 0)
            // Every confirmed event arrives; at most the one in flight at the kill is extra.
            #expect(sent >= confirmed && sent <= confirmed + 1, "confirmed \(confirmed), delivered \(sent)")
            let stats = try await CLI.run(["events", "stats", "--catalog", catalog, "--json"])
            #expect((try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Any])?["total"] as? Int == sent)
        }
    }
}
