import Foundation
import Testing

/// The command line as a new user meets it: one vocabulary, errors that say
/// what to do with distinct exit codes, nothing created by mistake, no secret
/// printed — each item of "The house" issue, run against the real binary.
@Suite("vsearch command-line contract", .serialized, .timeLimit(.minutes(10)))
struct CommandLineContractTests {
    typealias CLI = CLITests

    /// The corpus indexed once for the suite (a failure here fails every test that reads it, loudly).
    static let indexed = Task {
        let path = EngineCLITests.catalogPath()
        try await EngineCLITests.indexCorpus(path)
        return path
    }
    static var catalog: String { get async throws { try await indexed.value } }

    @Test("a reading command with a mistyped --catalog creates nothing and exits 66 saying how to make one",
          arguments: [["similar", "chelsea_cat"], ["search", "--image", CLI.repository + "/corpus/images/astronaut.jpg"],
                      ["color", "f0f"], ["recommend", "x"], ["catalog", "stats"], ["events", "stats"], ["serve", "--port", "0"]])
    func missingCatalog(command: [String]) async throws {
        let folder = CLI.temporaryDirectory()
        let mistyped = folder + "/typo/catalog.sqlite"
        let run = try await CLI.run(command + ["--catalog", mistyped])
        #expect(run.status == 66, "\(run.stderr)")
        #expect(run.stderr.contains("no catalog at \(mistyped)") && run.stderr.contains("vsearch index"))
        #expect(!FileManager.default.fileExists(atPath: folder + "/typo"), "no folder may be created")
    }

    @Test("a postgresql:// catalog is recognised as a database, never made into a local folder")
    func postgresURL() async throws {
        let folder = CLI.temporaryDirectory()
        let run = try await CLI.run(["similar", "x", "--catalog", "postgresql://shop:hunter2@db.example/catalog?connect_timeout=1"], directory: folder)
        #expect(run.status == 69 && run.stderr.contains("postgresql://shop@db.example:5432/catalog"), "\(run.stderr)")
        #expect(!run.stderr.contains("hunter2"), "the password is never printed")
        #expect(CLI.files(under: folder).isEmpty, "nothing is created in the working directory")
    }

    @Test("--quality 1.5 is refused as ambiguous instead of read as 0.015")
    func ambiguousQuality() async throws {
        let output = CLI.temporaryDirectory()
        let run = try await CLI.run(["prepare", CLI.repository + "/corpus/images/astronaut.jpg", output + "/a.jpg", "--quality", "1.5"])
        #expect(run.status == 64 && run.stderr.contains("ambiguous"))
        #expect(try await CLI.run(["prepare", CLI.repository + "/corpus/images/astronaut.jpg", output + "/b.jpg", "--quality", "97"]).status == 0)
    }

    @Test("a page past the end says so instead of 'showing 0–495'")
    func pagePastTheEnd() async throws {
        let run = try await CLI.run(["similar", "chelsea_cat", "--catalog", Self.catalog, "--page", "100", "--limit", "5"])
        #expect(run.status == 0)
        #expect(run.stdout.contains("page 100 is past the last page (21)") && !run.stdout.contains("showing 0"), "\(run.stdout)")
    }

    @Test("one exit code per kind of failure: missing input file 66 (search and prepare alike), unreachable host 69")
    func exitCodes() async throws {
        let missing = CLI.temporaryDirectory() + "/nope.jpg"
        let search = try await CLI.run(["search", "--image", missing, "--catalog", Self.catalog])
        let prepare = try await CLI.run(["prepare", missing, CLI.temporaryDirectory() + "/out.jpg"])
        #expect(search.status == 66 && prepare.status == 66, "search \(search.status) prepare \(prepare.status)")
        let unresolvable = try await CLI.run(["search", "--im-url", "http://no-such-host.invalid/x.jpg", "--catalog", Self.catalog])
        #expect(unresolvable.status == 69, "\(unresolvable.stderr)")
        let remoteDown = try await CLI.run(["similar", "x", "--endpoint", "http://127.0.0.1:9", "--app-key", "k", "--timeout", "2"])
        #expect(remoteDown.status == 69)
    }

    @Test("an app key never appears in an error message")
    func secretsRedacted() async throws {
        let run = try await CLI.run(["similar", "chelsea_cat", "--endpoint", "http://127.0.0.1:9", "--app-key", "APPKEY-SECRET-42", "--timeout", "2"])
        #expect(run.status == 69)
        #expect(!run.stderr.contains("APPKEY-SECRET-42") && run.stderr.contains("access_key=***"), "\(run.stderr)")
    }

    @Test("--json means machine output everywhere, with the API's snake_case keys")
    func jsonVocabulary() async throws {
        let folder = CLI.temporaryDirectory()
        let thumbs = try await CLI.run(["thumbs", CLI.repository + "/corpus/images/astronaut.jpg", folder, "--json"])
        #expect(thumbs.status == 0, "\(thumbs.stderr)")
        #expect(thumbs.stdout.contains("\"up_to_date\"") && thumbs.stdout.contains("\"thumbnails_written\"") && !thumbs.stdout.contains("upToDate"))
        let index = try await CLI.run(["index", CLI.repository + "/corpus/images", "--catalog", folder + "/c.sqlite", "--json"])
        #expect(index.stdout.contains("\"catalog_count\"") && !index.stdout.contains("catalogCount"))
        let track = try await CLI.run(["track", "product_click", "--query-id", "1", "--pid", "chelsea_cat", "--im-url", "http://x/y.jpg",
                                 "--pos", "1", "--catalog", Self.catalog, "--json"])
        #expect(track.status == 0, "\(track.stderr)")
        #expect((try JSONSerialization.jsonObject(with: Data(track.stdout.utf8)) as? [String: Any])?["event_id"] is String)
        let payload = try await CLI.run(["track", "search", "--query-id", "1", "--json-payload", "{\"q\":1}", "--catalog", Self.catalog])
        #expect(payload.status == 0, "\(payload.stderr)")
    }

    @Test("index: progress, 'committed N' and the summary on stderr; --quiet prints nothing on success")
    func indexOutput() async throws {
        let folder = CLI.temporaryDirectory()
        let run = try await CLI.run(["index", CLI.repository + "/corpus/images", "--catalog", folder + "/c.sqlite", "--batch-size", "50"])
        #expect(run.status == 0 && run.stdout.isEmpty && run.stderr.contains("committed 50"))
        let quiet = try await CLI.run(["index", CLI.repository + "/corpus/images", "--catalog", folder + "/d.sqlite", "--quiet"])
        #expect(quiet.status == 0 && quiet.stdout.isEmpty && quiet.stderr.isEmpty, "\(quiet.stderr)")
    }

    @Test("metadata rows that match no image are reported, not silently ignored")
    func unmatchedMetadata() async throws {
        let folder = CLI.temporaryDirectory()
        try "im_name,brand\nastronaut,nasa\nghost_item,nobody\n".write(toFile: folder + "/meta.csv", atomically: true, encoding: .utf8)
        let run = try await CLI.run(["index", CLI.repository + "/corpus/images/astronaut.jpg", "--metadata", folder + "/meta.csv",
                               "--catalog", folder + "/c.sqlite"])
        #expect(run.status == 0 && run.stderr.contains("1 metadata row matches no image") && run.stderr.contains("ghost_item"), "\(run.stderr)")
    }

    @Test("an unknown fq field lists the fields that exist")
    func unknownFieldListsKnown() async throws {
        let run = try await CLI.run(["similar", "chelsea_cat", "--catalog", Self.catalog, "--fq", "colour:red"])
        #expect(run.status == 64 && run.stderr.contains("Unknown field colour") && run.stderr.contains("brand"), "\(run.stderr)")
    }

    @Test("a port in use is explained in words")
    func portInUse() async throws {
        _ = try await ServeCLITests.serving(Self.catalog) { url, server in
            let port = String(url.split(separator: ":").last ?? "0")
            let second = try await CLI.run(["serve", "--catalog", Self.catalog, "--port", port])
            #expect(second.status == 69 && second.stderr.contains("already in use") && second.stderr.contains("--port"), "\(second.stderr)")
        }
    }

    @Test("discover, product search/recommend and the remote data API exist and work", .timeLimit(.minutes(10)))
    func newCommands() async throws {
        let discover = try await CLI.run(["discover", "--image", CLI.repository + "/corpus/images/astronaut.jpg", "--point", "100,100",
                                    "--point", "300,200", "--result-limit", "2", "--catalog", Self.catalog, "--json"])
        #expect(discover.status == 0, "\(discover.stderr)")
        #expect(((try JSONSerialization.jsonObject(with: Data(discover.stdout.utf8)) as? [String: Any])?["objects"] as? [Any])?.count == 2)
        let product = try await CLI.run(["product", "search", "--image", CLI.repository + "/corpus/images/astronaut.jpg", "--catalog", Self.catalog])
        #expect(product.status == 0 && product.stdout.contains("astronaut"), "\(product.stderr)")
        let recommend = try await CLI.run(["product", "recommend", "coffee_cup", "--catalog", Self.catalog, "--json"])
        #expect(recommend.status == 0 && recommend.stdout.contains("\"product_info\""))

        let catalog = EngineCLITests.catalogPath()
        try await EngineCLITests.indexCorpus(catalog)
        _ = try await ServeCLITests.serving(catalog, ["--image-root", CLI.repository + "/corpus/images"]) { url, server in
            let insert = try await CLI.run(["insert", "rocket_again=file://" + CLI.repository + "/corpus/images/falcon9_rocket.jpg",
                                      "--field", "brand=spacex", "--endpoint", url, "--wait"])
            #expect(insert.status == 0 && insert.stdout.contains("1 indexed"), "\(insert.stdout) \(insert.stderr)")
            let found = try await CLI.run(["similar", "rocket_again", "--endpoint", url, "--limit", "1"])
            #expect(found.status == 0 && found.stdout.contains("rocket_again"))
            let remove = try await CLI.run(["remove", "rocket_again", "--endpoint", url])
            #expect(remove.status == 0 && remove.stdout.contains("removed 1 of 1"))
        }
    }

    @Test("the --html page works from any directory and shows facets, filters, the query box and links to originals")
    func htmlPage() async throws {
        let elsewhere = CLI.temporaryDirectory()
        let html = elsewhere + "/page.html"
        let run = try await CLI.run(["search", "--image", CLI.repository + "/corpus/images/astronaut.jpg", "--box", "50,50,300,300",
                               "--catalog", Self.catalog, "--fq", "category:photo", "--facets", "brand", "--fl", "brand", "--html", html],
                              directory: elsewhere)
        #expect(run.status == 0, "\(run.stderr)")
        let page = try String(contentsOfFile: html, encoding: .utf8)
        #expect(page.components(separatedBy: "data:image/jpeg;base64,").count >= 4, "query and results embedded")
        #expect(page.contains("class=\"box\"") && page.contains("category:photo") && page.contains("<b>brand</b>"))
        #expect(page.contains("href=\"file://"), "results link to their originals")
        let color = try await CLI.run(["color", "c45b3b", "--catalog", Self.catalog, "--html", html])
        let swatchPage = try String(contentsOfFile: html, encoding: .utf8)
        #expect(color.status == 0 && swatchPage.contains("class=\"swatch\" style=\"background:#c45b3b\""))
    }
}
