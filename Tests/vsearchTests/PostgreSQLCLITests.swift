import Foundation
import Testing
import TestSupport

/// The command line on a PostgreSQL catalog (`--catalog postgresql://…`),
/// against the real server `scripts/test.sh` starts: the same answers as
/// SQLite, the same refusals, kill -9 safety, and several indexers at once.
@Suite("vsearch on PostgreSQL", .serialized, .enabled(if: PostgreSQLTestDatabase.isRequired), .timeLimit(.minutes(10)))
struct PostgreSQLCLITests {
    typealias CLI = CLITests

    static func index(_ catalog: String, _ extra: [String] = []) async throws -> CLI.Run {
        try await CLI.run(["index", CLI.repository + "/corpus/images", "--metadata", CLI.repository + "/corpus/catalog.csv",
                     "--catalog", catalog] + extra)
    }

    /// The JSON answer without what differs between runs (request and upload ids).
    static func answer(_ run: CLI.Run) throws -> NSDictionary {
        guard var object = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any] else {
            Issue.record("not a JSON object: \(run.stdout.prefix(200)) \(run.stderr)")
            return [:]
        }
        object["reqid"] = nil
        object["im_id"] = nil
        return object as NSDictionary
    }

    @Test("a closed stdout ends the process as SIGPIPE does, quietly, on PostgreSQL too (no try! crash)")
    func closedPipe() async throws {
        let postgres = try PostgreSQLTestDatabase.freshURL()
        #expect(try await Self.index(postgres).status == 0)
        for command in [["events", "stats"], ["catalog", "export"], ["similar", "chelsea_cat", "--json"]] {
            let run = try await CLI.runIntoClosedPipe(command + ["--catalog", postgres])
            #expect(run.signal == SIGPIPE, "\(command): status \(run.status), signal \(String(describing: run.signal)) \(run.stderr.prefix(300))")
            #expect(!run.stderr.contains("Fatal error") && !run.stderr.contains("crashed"), "\(command)")
        }
    }

    @Test("every query command answers the same from PostgreSQL as from SQLite")
    func sameAnswers() async throws {
        let sqlite = CLI.temporaryDirectory() + "/catalog.sqlite"
        let postgres = try PostgreSQLTestDatabase.freshURL()
        #expect(try await Self.index(sqlite).status == 0)
        let indexed = try await Self.index(postgres, ["--json"])
        #expect(indexed.status == 0, "\(indexed.stderr)")
        let image = CLI.repository + "/corpus/images/falcon9_rocket.jpg"
        let queries: [[String]] = [
            ["similar", "chelsea_cat", "--fl", "brand", "--fl", "price", "--limit", "20"],
            ["similar", "chelsea_cat", "--fq", "category:food", "--facets", "brand", "--facets-show-count", "--get-all-fl"],
            ["similar", "astronaut", "--fq", "price:0,50", "--facets", "*", "--page", "2", "--limit", "5", "--dedup"],
            ["recommend", "coffee_cup", "--fl", "description", "--score-min", "0.5"],
            ["color", "c45b3b", "--facets", "category"],
            ["search", "--image", image, "--fq", "category=photo", "--facets", "brand", "--box", "0,0,300,300"],
            ["product", "search", "--image", image, "--limit", "4"],
            ["product", "recommend", "coffee_cup"],
            ["discover", "--image", image],
        ]
        for query in queries {
            let local = try await CLI.run(query + ["--catalog", sqlite, "--json"])
            let remote = try await CLI.run(query + ["--catalog", postgres, "--json"])
            #expect(local.status == 0 && remote.status == 0, "\(query): \(local.stderr) \(remote.stderr)")
            #expect(try Self.answer(local) == Self.answer(remote), "\(query.joined(separator: " "))")
        }
        let stats = try await CLI.run(["catalog", "stats", "--catalog", postgres, "--json"])
        let report = try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Any]
        #expect(report?["images"] as? Int == 102 && report?["integrity"] as? String == "ok")
        #expect((report?["location"] as? String)?.hasPrefix("postgresql://postgres@127.0.0.1:") == true)
    }

    @Test("catalog migrate: SQLite → PostgreSQL → SQLite keeps every image, value and event, answers the same; track and events stats on PostgreSQL")
    func migrate() async throws {
        let sqlite = CLI.temporaryDirectory() + "/catalog.sqlite"
        #expect(try await Self.index(sqlite).status == 0)
        for (action, pid) in [("product_click", "chelsea_cat"), ("product_view", "chelsea_cat"), ("product_view", "coffee_cup")] {
            let track = try await CLI.run(["track", action, "--query-id", "q1", "--pid", pid, "--im-url", "http://x/y.jpg", "--pos", "1",
                                     "--catalog", sqlite])
            #expect(track.status == 0, "\(track.stderr)")
        }
        let postgres = try PostgreSQLTestDatabase.freshURL()
        // With a password in the URL (the test server trusts loopback, so any works): never printed.
        let withPassword = postgres.replacingOccurrences(of: "postgresql://postgres@", with: "postgresql://postgres:s3cret-pw@")
        #expect(withPassword != postgres)
        let there = try await CLI.run(["catalog", "migrate", sqlite, withPassword, "--json", "--batch-size", "40"])
        #expect(there.status == 0, "\(there.stderr)")
        #expect(!there.stdout.contains("s3cret-pw") && !there.stderr.contains("s3cret-pw"))
        let summary = try JSONSerialization.jsonObject(with: Data(there.stdout.utf8)) as? [String: Any]
        #expect(summary?["images"] as? Int == 102 && summary?["events"] as? Int == 3 && (summary?["values"] as? Int ?? 0) > 400)

        // The copy answers as the original, and its collector holds the events (track and events stats on PostgreSQL).
        // The learned vectors came along (the catalog was indexed with the model installed): visual, fused and
        // uploads answer the same from PostgreSQL (exact k-NN on a catalog this small).
        for query in [["similar", "chelsea_cat", "--fq", "category:food", "--facets", "brand", "--get-all-fl"], ["color", "c45b3b"],
                      ["similar", "tp_clothes_hats_sombrero", "--similarity", "visual"], ["recommend", "coffee_cup", "--similarity", "fused"],
                      ["search", "--image", CLI.repository + "/corpus/images/tp_hobbies_music_string_cello.jpg", "--similarity", "visual"]] {
            let local = try await CLI.run(query + ["--catalog", sqlite, "--json"]), remote = try await CLI.run(query + ["--catalog", postgres, "--json"])
            #expect(try Self.answer(local) == Self.answer(remote), "\(query)")
        }
        let learned = try await CLI.run(["catalog", "stats", "--catalog", postgres, "--json"])
        #expect((try JSONSerialization.jsonObject(with: Data(learned.stdout.utf8)) as? [String: Any])?["learned_images"] as? Int == 102,
                "\(learned.stdout) \(learned.stderr)")
        let tracked = try await CLI.run(["track", "add_to_cart", "--query-id", "q1", "--pid", "chelsea_cat", "--im-url", "http://x/y.jpg",
                                   "--pos", "1", "--catalog", postgres])
        #expect(tracked.status == 0, "\(tracked.stderr)")
        let stats = try await CLI.run(["events", "stats", "--catalog", postgres, "--json"])
        let counted = try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Any]
        #expect(counted?["total"] as? Int == 4, "\(stats.stdout) \(stats.stderr)")

        // And back into a new SQLite file: the same export, and the fourth event.
        let back = CLI.temporaryDirectory() + "/back.sqlite"
        let returned = try await CLI.run(["catalog", "migrate", postgres, back])
        #expect(returned.status == 0 && returned.stdout.contains("copied 102 images") && returned.stdout.contains("4 events")
                && returned.stdout.contains("verified"), "\(returned.stdout) \(returned.stderr)")
        #expect(try await CLI.run(["catalog", "export", "--catalog", back]).stdout == CLI.run(["catalog", "export", "--catalog", sqlite]).stdout)
        let backStats = try await CLI.run(["events", "stats", "--catalog", back, "--json"])
        #expect((try JSONSerialization.jsonObject(with: Data(backStats.stdout.utf8)) as? [String: Any])?["total"] as? Int == 4)

        // Run again: an interrupted or repeated migrate just completes.
        #expect(try await CLI.run(["catalog", "migrate", sqlite, postgres]).status == 0)
        // A target holding other images is refused before anything is written; a missing source is 66; same catalog is a usage error.
        let other = CLI.temporaryDirectory() + "/other.sqlite"
        #expect(try await CLI.run(["index", CLI.repository + "/corpus/images", "--shard", "1/5", "--catalog", other]).status == 0)
        let refused = try await CLI.run(["catalog", "migrate", other, postgres])
        #expect(refused.status != 0 && refused.stderr.contains("copy into an empty catalog"), "\(refused.stderr)")
        let missing = try await CLI.run(["catalog", "migrate", CLI.temporaryDirectory() + "/none.sqlite", postgres])
        #expect(missing.status == 66, "\(missing.stderr)")
        #expect(try await CLI.run(["catalog", "migrate", sqlite, sqlite]).status == 64)
    }

    @Test("a database without a catalog is refused (66) and left without tables; only index creates one")
    func missingCatalog() async throws {
        let postgres = try PostgreSQLTestDatabase.freshURL()
        let run = try await CLI.run(["similar", "chelsea_cat", "--catalog", postgres])
        #expect(run.status == 66, "\(run.stderr)")
        #expect(run.stderr.contains("no catalog at postgresql://") && run.stderr.contains("vsearch index"))
        let again = try await CLI.run(["catalog", "stats", "--catalog", postgres])
        #expect(again.status == 66, "reading must not have created the catalog: \(again.stderr)")
    }

    @Test("an unreachable server exits 69 naming the address, and no output holds the password")
    func unreachable() async throws {
        let run = try await CLI.run(["similar", "chelsea_cat", "--catalog", "postgresql://shop:s3cret@127.0.0.1:1/catalog?connect_timeout=1"])
        #expect(run.status == 69, "\(run.stderr)")
        #expect(run.stderr.contains("postgresql://shop@127.0.0.1:1/catalog"))
        #expect(!run.stderr.contains("s3cret") && !run.stdout.contains("s3cret"))
        let fromEnvironment = try await CLI.run(["catalog", "stats"],
                                          environment: ["VSEARCH_CATALOG": "postgresql://shop@127.0.0.1:1/catalog?connect_timeout=1",
                                                        "PGPASSWORD": "s3cret"])
        #expect(fromEnvironment.status == 69 && !fromEnvironment.stderr.contains("s3cret"))
    }

    @Test("kill -9 at random moments, 8 times: every acknowledged batch is in PostgreSQL, integrity ok; a re-run completes exactly")
    func killDuringIndexing() async throws {
        let (folder, count) = try EngineCLITests.largeFolder()
        try await EngineCLITests.killWhileIndexing(folder: folder, count: count, catalog: try PostgreSQLTestDatabase.freshURL(),
                                             rounds: 8, pause: 0.2...0.8)
    }

    @Test("three indexers at once into one new catalog: each image once, every field declared once, nothing lost")
    func concurrentIndexers() async throws {
        let (folder, count) = try EngineCLITests.largeFolder()
        let catalog = try PostgreSQLTestDatabase.freshURL()
        let arguments = ["index", folder, "--metadata", CLI.repository + "/corpus/catalog.csv", "--catalog", catalog,
                         "--batch-size", "7", "--jobs", "1", "--quiet"]
        let runs = try await withThrowingTaskGroup(of: CLITests.Run.self) { group in
            for _ in 0..<3 { group.addTask { try await CLI.run(arguments) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for run in runs {
            #expect(run.status == 0, "\(run.stderr)")  // rows of catalog.csv without images are a warning, not a failure
        }
        let stats = try await CLI.run(["catalog", "stats", "--catalog", catalog, "--json"])
        let report = try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Any]
        #expect(report?["images"] as? Int == count && report?["integrity"] as? String == "ok", "\(stats.stdout) \(stats.stderr)")
    }
}
