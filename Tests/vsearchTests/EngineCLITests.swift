import Foundation
import ImageOps
import TestSupport
import Testing

/// The engine's commands, run as a user would: index, search, similar,
/// recommend, color, catalog — and crash-safety of indexing under kill -9.
@Suite("vsearch engine commands", .serialized)
struct EngineCLITests {
    typealias CLI = CLITests

    static func catalogPath() -> String { CLI.temporaryDirectory() + "/catalog.sqlite" }

    static func indexCorpus(_ catalog: String) async throws {
        let run = try await CLI.run(["index", CLI.repository + "/corpus/images", "--metadata", CLI.repository + "/corpus/catalog.csv",
                               "--catalog", catalog])
        #expect(run.status == 0, "\(run.stderr)")
    }

    @Test("index prints durable batches and a summary; a second run decodes nothing")
    func index() async throws {
        let catalog = Self.catalogPath()
        let first = try await CLI.run(["index", CLI.repository + "/corpus/images", "--catalog", catalog, "--batch-size", "40"])
        #expect(first.status == 0)
        let committed = first.stderr.split(separator: "\n").filter { $0.hasPrefix("committed ") }
        #expect(committed == ["committed 40", "committed 80", "committed 102"])
        #expect(first.stderr.contains("102 files: 102 indexed, 0 unchanged, 0 failed"))
        #expect(first.stdout.isEmpty, "progress and summaries go to stderr")
        let second = try await CLI.run(["index", CLI.repository + "/corpus/images", "--catalog", catalog, "--json"])
        let summary = try JSONSerialization.jsonObject(with: Data(second.stdout.utf8)) as? [String: Any]
        #expect(summary?["indexed"] as? Int == 0 && summary?["unchanged"] as? Int == 102 && summary?["catalog_count"] as? Int == 102)
    }

    @Test("search --json prints the ViSearch response; the table shows names, scores and fields; --html writes a page")
    func search() async throws {
        let catalog = Self.catalogPath()
        try await Self.indexCorpus(catalog)
        let html = CLI.temporaryDirectory() + "/results.html"
        let json = try await CLI.run(["search", "--image", CLI.repository + "/corpus/images/falcon9_rocket.jpg", "--catalog", catalog,
                                "--fq", "category=photo", "--fl", "brand", "--facets", "brand", "--facets-show-count", "--json", "--limit", "3"])
        #expect(json.status == 0, "\(json.stderr)")
        let response = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        #expect(response?["status"] as? String == "OK" && response?["method"] as? String == "uploadsearch")
        #expect(((response?["result"] as? [[String: Any]])?.first)?["im_name"] as? String == "falcon9_rocket")
        #expect(response?["im_id"] is String && response?["facets"] is [Any])
        let table = try await CLI.run(["similar", "chelsea_cat", "--catalog", catalog, "--fl", "price", "--html", html])
        #expect(table.status == 0)
        #expect(table.stdout.contains("1  chelsea_cat") && table.stdout.contains("1.0000"))
        let page = try String(contentsOfFile: html, encoding: .utf8)
        #expect(page.contains("data:image/jpeg;base64,") && page.contains("chelsea_cat"))
    }

    @Test("recommend, color and catalog stats/remove/export")
    func otherCommands() async throws {
        let catalog = Self.catalogPath()
        try await Self.indexCorpus(catalog)
        let recommend = try await CLI.run(["recommend", "coffee_cup", "--catalog", catalog, "--json"])
        #expect(recommend.status == 0 && !recommend.stdout.contains("\"im_name\" : \"coffee_cup\""))
        let color = try await CLI.run(["color", "#C45B3B", "--catalog", catalog, "--limit", "3"])
        #expect(color.status == 0 && color.stdout.contains("colorsearch #c45b3b"))
        let stats = try await CLI.run(["catalog", "stats", "--catalog", catalog, "--json"])
        let report = try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Any]
        #expect(report?["images"] as? Int == 102 && report?["integrity"] as? String == "ok" && report?["stale_features"] as? Int == 0)
        #expect(try await CLI.run(["catalog", "remove", "astronaut", "--catalog", catalog]).stdout.contains("removed 1 of 1"))
        let export = try await CLI.run(["catalog", "export", "--catalog", catalog])
        #expect(export.stdout.split(separator: "\n").count == 101)
    }

    @Test("insert, insert-status and remove work on the local catalog: a relative path is read from the working directory, the insert ends committed, the journal answers its status")
    func localDataAPI() async throws {
        let catalog = Self.catalogPath()
        try await Self.indexCorpus(catalog)
        let folder = CLI.temporaryDirectory()
        try FileManager.default.copyItem(atPath: CLI.repository + "/corpus/images/falcon9_rocket.jpg", toPath: folder + "/rocket.jpg")
        let insert = try await CLI.run(["insert", "rocket_again=rocket.jpg", "missing=nope.jpg", "--field", "brand=spacex", "--catalog", catalog],
                                       directory: folder)
        #expect(insert.status == 1 && insert.stdout.contains("1 indexed, 1 failed") && insert.stderr.contains("missing"),
                "\(insert.stdout) \(insert.stderr)")
        let id = String(try #require(insert.stdout.components(separatedBy: "trans_id ").dropFirst().first, "\(insert.stdout)").prefix(while: \.isNumber))
        let found = try await CLI.run(["similar", "rocket_again", "--catalog", catalog, "--limit", "2", "--fl", "brand", "--json"])  // falcon9_rocket is the same picture
        #expect(found.status == 0 && found.stdout.contains("\"rocket_again\"") && found.stdout.contains("spacex"), "\(found.stdout)")
        let status = try await CLI.run(["insert-status", id, "--catalog", catalog])
        #expect(status.status == 1 && status.stdout.contains("100% of 2"), "\(status.stdout) \(status.stderr)")
        let remove = try await CLI.run(["remove", "rocket_again", "ghost", "--catalog", catalog])
        #expect(remove.status == 1 && remove.stdout.contains("removed 1 of 2"), "\(remove.stdout) \(remove.stderr)")
        #expect(try await CLI.run(["similar", "rocket_again", "--catalog", catalog]).status == 65)
    }

    @Test("errors: unknown field and bad values exit 64, unknown im_name 65, foreign catalog 74 — each with a message")
    func errors() async throws {
        let catalog = Self.catalogPath()
        try await Self.indexCorpus(catalog)
        let unknown = try await CLI.run(["similar", "astronaut", "--catalog", catalog, "--fq", "nope=1"])
        #expect(unknown.status == 64 && unknown.stderr.contains("Unknown field nope"))
        let notFound = try await CLI.run(["similar", "ghost", "--catalog", catalog, "--json"])
        #expect(notFound.status == 65 && notFound.stdout.contains("\"status\" : \"fail\""))
        #expect(try await CLI.run(["color", "notacolour", "--catalog", catalog]).status == 64)
        #expect(try await CLI.run(["similar", "astronaut", "--catalog", catalog, "--page", "0"]).status == 64)
        let foreign = try await CLI.run(["catalog", "stats", "--catalog", CLI.repository + "/Package.swift"])
        #expect(foreign.status == 74 && foreign.stderr.contains("Package.swift"))
    }

    @Test("the catalog location comes from --catalog, else $VSEARCH_CATALOG, else .vsearch/catalog.sqlite")
    func catalogLocation() async throws {
        let viaEnvironment = CLI.temporaryDirectory() + "/env.sqlite"
        let run = try await CLI.run(["index", CLI.repository + "/corpus/images", "--json"], environment: ["VSEARCH_CATALOG": viaEnvironment])
        #expect(run.status == 0)
        #expect(FileManager.default.fileExists(atPath: viaEnvironment))
        let stats = try await CLI.run(["catalog", "stats", "--json"], environment: ["VSEARCH_CATALOG": viaEnvironment])
        #expect(stats.stdout.contains("\"images\" : 102"))
    }

    @Test("search --im-url fetches from a real HTTP server on loopback; a 404 is bad input (65)")
    func httpURL() async throws {
        let catalog = Self.catalogPath()
        try await Self.indexCorpus(catalog)
        // A real HTTP server on loopback, listening before the first request (no wait for it to start).
        let server = LoopbackStub([.serve(contentType: "image/jpeg", bytes: Repository.bytes("chelsea_cat.jpg")),
                                   .respond(404, body: "no such image")])
        defer { server.stop() }
        let run = try await CLI.run(["search", "--im-url", server.url("/chelsea_cat.jpg").absoluteString, "--catalog", catalog, "--json", "--limit", "1"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("\"im_name\" : \"chelsea_cat\""))
        let missing = try await CLI.run(["search", "--im-url", server.url("/nope.jpg").absoluteString, "--catalog", catalog])
        #expect(missing.status == 65 && missing.stderr.contains("404"), "\(missing.stderr)")
    }

    /// 150 distinct images (corpus copies under new names, each altered so its hash differs).
    static func largeFolder() throws -> (path: String, count: Int) {
        let folder = CLI.temporaryDirectory()
        let names = try FileManager.default.contentsOfDirectory(atPath: CLI.repository + "/corpus/images").sorted()
        var count = 0
        for copy in 0..<2 {
            for name in names.prefix(75) {
                var bytes = try FileIO.read(CLI.repository + "/corpus/images/" + name)
                bytes.append(contentsOf: Array("copy\(copy)".utf8))  // trailing bytes after EOI: a different file, same picture
                try FileIO.write(bytes, to: folder + "/c\(copy)_" + name)
                count += 1
            }
        }
        return (folder, count)
    }

    @Test("kill -9 at random moments, 20 times: the catalog always opens, integrity ok, every acknowledged batch present; a re-run completes exactly")
    func killDuringIndexing() async throws {
        let (folder, count) = try Self.largeFolder()
        try await Self.killWhileIndexing(folder: folder, count: count, catalog: Self.catalogPath(), rounds: 20, pause: 0.02...0.25)
    }

    /// Starts `vsearch index folder --catalog catalog` and kills it with
    /// SIGKILL after a random pause, `rounds` times. After each round the
    /// catalog either does not exist (then nothing may have been
    /// acknowledged) or opens with integrity ok and holds every batch the
    /// process acknowledged (`committed N`). Then a re-run completes the job
    /// and another one decodes nothing. Any catalog location works.
    static func killWhileIndexing(folder: String, count: Int, catalog: String, rounds: Int, pause: ClosedRange<Double>) async throws {
        var generator = SystemRandomNumberGenerator()
        var before = 0
        for round in 0..<rounds {
            let pauseSeconds = Double.random(in: pause, using: &generator)
            let (_, killed) = try await CLI.withRunning(["index", folder, "--catalog", catalog, "--batch-size", "5", "--jobs", "2"]) { index in
                try await Task.sleep(for: .seconds(pauseSeconds))  // a random moment to kill at, not a wait for something
                index.signal(SIGKILL)
            }
            let acknowledged = killed.stderr.split(separator: "\n").compactMap { line in
                line.hasPrefix("committed ") ? Int(line.dropFirst(10)) : nil
            }.last ?? 0
            let stats = try await CLI.run(["catalog", "stats", "--catalog", catalog, "--json"])
            if stats.status == 66 {
                #expect(acknowledged == 0, "round \(round): acknowledged \(acknowledged) with no catalog")
                continue
            }
            #expect(stats.status == 0, "round \(round): \(stats.stderr)")
            let report = try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Any]
            #expect(report?["integrity"] as? String == "ok", "round \(round)")
            let after = report?["images"] as? Int ?? -1
            #expect(after >= before + acknowledged, "round \(round): \(after) rows, \(before) before + \(acknowledged) acknowledged")
            #expect(after <= count)
            before = after
        }
        let finish = try await CLI.run(["index", folder, "--catalog", catalog, "--json"])
        #expect(finish.status == 0, "\(finish.stderr)")
        let again = try await CLI.run(["index", folder, "--catalog", catalog, "--json"])
        let summary = try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any]
        #expect(summary?["indexed"] as? Int == 0 && summary?["catalog_count"] as? Int == count)
    }

    @Test("readers keep answering while another process indexes (WAL)")
    func concurrentReaders() async throws {
        let (folder, _) = try Self.largeFolder()
        let catalog = Self.catalogPath()
        try await Self.indexCorpus(catalog)
        let (answered, writer) = try await CLI.withRunning(["index", folder, "--catalog", catalog, "--batch-size", "3", "--jobs", "1"]) { writer in
            var answered = 0
            while !writer.hasEnded && answered < 30 {
                let run = try await CLI.run(["similar", "astronaut", "--catalog", catalog, "--json", "--limit", "1"])
                #expect(run.status == 0, "\(run.stderr)")
                answered += 1
            }
            return answered
        }
        #expect(writer.status == 0, "\(writer.stderr)")
        #expect(answered > 0)
    }
}
