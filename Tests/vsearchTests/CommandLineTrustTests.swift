import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The command line tells the truth: no silent overwrite, no locked catalog,
/// no typo passing for a query, no misleading message or exit code, no
/// success reported for what did not happen, no contradicting answer, help
/// that reads at 80 columns — issue 24's "Command line" items, each run
/// against the real binary.
@Suite("vsearch command line tells the truth", .serialized, .timeLimit(.minutes(10)))
struct CommandLineTrustTests {
    typealias CLI = CLITests

    /// The corpus indexed once for the suite (a failure here fails every test that reads it, loudly).
    static let indexed = Task {
        let path = EngineCLITests.catalogPath()
        try await EngineCLITests.indexCorpus(path)
        return path
    }
    static var catalog: String { get async throws { try await indexed.value } }

    static let corpus = CLI.repository + "/corpus/images"

    /// A folder with copies of corpus images under the given names.
    static func folder(_ files: [String: String]) throws -> String {
        let folder = CLI.temporaryDirectory()
        for (name, source) in files {
            let target = folder + "/" + name
            try FileManager.default.createDirectory(atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: corpus + "/" + source, toPath: target)
        }
        return folder
    }

    static func json(_ text: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
    }

    // MARK: - 14. A closed pipe

    @Test("a closed stdout ends the process as SIGPIPE does, quietly (SQLite catalog)")
    func closedPipeOnSQLite() async throws {
        for command in [["catalog", "export"], ["similar", "chelsea_cat", "--json"], ["events", "stats"]] {
            let run = try await CLI.runIntoClosedPipe(command + ["--catalog", Self.catalog])
            #expect(run.signal == SIGPIPE, "\(command): status \(run.status), signal \(String(describing: run.signal)) \(run.stderr)")
            #expect(!run.stderr.contains("Fatal error"), "\(command)")
        }
    }

    // MARK: - 12. Files that differ only in extension

    @Test("index and thumbs refuse files that differ only in extension, naming them, before any work")
    func sameNameFiles() async throws {
        let input = try Self.folder(["astro.jpg": "astronaut.jpg", "astro.JPG": "astronaut.jpg", "cup.jpg": "coffee_cup.jpg"])
        let catalog = CLI.temporaryDirectory() + "/catalog.sqlite"
        let index = try await CLI.run(["index", input, "--catalog", catalog])
        #expect(index.status == 65, "\(index.stderr)")
        #expect(index.stderr.contains("astro.JPG  astro.jpg") && index.stderr.contains("differ only in extension"))
        #expect(!FileManager.default.fileExists(atPath: catalog), "no catalog is created")
        let output = CLI.temporaryDirectory() + "/thumbs"
        let thumbs = try await CLI.run(["thumbs", input, output])
        #expect(thumbs.status == 65 && thumbs.stderr.contains("astro.JPG  astro.jpg"), "\(thumbs.stderr)")
        #expect(CLI.files(under: output).filter { $0.contains("_thumb_") }.isEmpty, "no thumbnail is written")
    }

    @Test("thumbnails have one extension per format: .JPG, .Jpeg and .jpeg all give .jpg")
    func oneExtensionPerFormat() async throws {
        let input = try Self.folder(["a.JPG": "coffee_cup.jpg", "b.Jpeg": "coffee_cup.jpg", "c.jpeg": "coffee_cup.jpg"])
        let output = CLI.temporaryDirectory()
        let run = try await CLI.run(["thumbs", input, output, "--sizes", "400"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(CLI.files(under: output).filter { $0.contains("_thumb_") } == ["a_thumb_400x267.jpg", "b_thumb_400x267.jpg", "c_thumb_400x267.jpg"])
    }

    // MARK: - 13. A wrong --schema

    @Test("a --schema no value fits is refused once, before anything is declared, naming the type that fits; --quiet is one line")
    func wrongSchema() async throws {
        let catalog = CLI.temporaryDirectory() + "/catalog.sqlite"
        let metadata = CLI.repository + "/corpus/catalog.csv"
        let wrong = try await CLI.run(["index", Self.corpus, "--metadata", metadata, "--catalog", catalog, "--schema", "price:int", "--quiet"])
        #expect(wrong.status == 64, "\(wrong.stderr)")
        #expect(wrong.stderr.split(separator: "\n").count == 1, "one line: \(wrong.stderr)")
        #expect(wrong.stderr.contains("--schema price:float"))
        // Nothing declared or indexed: the catalog the refused run created is not left behind (issue 39).
        #expect(!FileManager.default.fileExists(atPath: catalog), "nothing declared or indexed, no empty catalog left")
        let right = try await CLI.run(["index", Self.corpus, "--metadata", metadata, "--catalog", catalog, "--schema", "price:float"])
        #expect(right.status == 0, "\(right.stderr)")
    }

    @Test("a field no image has a value for can be retyped; one with values is refused with the way out")
    func retype() async throws {
        let input = try Self.folder(["a.jpg": "astronaut.jpg", "b.jpg": "coffee_cup.jpg"])
        let catalog = CLI.temporaryDirectory() + "/catalog.sqlite"
        let empty = CLI.temporaryDirectory() + "/empty.csv"
        try "im_name,size\na,\nb,\n".write(toFile: empty, atomically: true, encoding: .utf8)
        #expect(try await CLI.run(["index", input, "--metadata", empty, "--catalog", catalog, "--schema", "size:int"]).status == 0)
        let values = CLI.temporaryDirectory() + "/values.csv"
        try "im_name,size\na,1.5\nb,2\n".write(toFile: values, atomically: true, encoding: .utf8)
        let retyped = try await CLI.run(["index", input, "--metadata", values, "--catalog", catalog, "--schema", "size:float"])
        #expect(retyped.status == 0, "\(retyped.stderr)")
        let stats = Self.json(try await CLI.run(["catalog", "stats", "--catalog", catalog, "--json"]).stdout)
        #expect((stats["fields"] as? [String: String])?["size"] == "float")
        let refused = try await CLI.run(["index", input, "--metadata", values, "--catalog", catalog, "--schema", "size:string"])
        #expect(refused.status == 64 && refused.stderr.contains("2 images have a value for it") && refused.stderr.contains("catalog remove"),
                "\(refused.stderr)")
    }

    @Test("a row whose value does not fit is reported once, the others indexed")
    func oneBadRow() async throws {
        let input = try Self.folder(["a.jpg": "astronaut.jpg", "b.jpg": "coffee_cup.jpg"])
        let metadata = CLI.temporaryDirectory() + "/m.csv"
        try "im_name,count\na,1\nb,many\n".write(toFile: metadata, atomically: true, encoding: .utf8)
        let run = try await CLI.run(["index", input, "--metadata", metadata, "--catalog", CLI.temporaryDirectory() + "/c.sqlite", "--schema", "count:int"])
        #expect(run.status == 1)
        #expect(run.stderr.components(separatedBy: "\"many\"").count == 2, "reported once: \(run.stderr)")
    }

    // MARK: - 15. Typos

    @Test("an unknown --fl, --facets or --schema field is an error listing the known ones", arguments: [
        ["similar", "chelsea_cat", "--fl", "brnad"], ["similar", "chelsea_cat", "--facets", "brnad"], ["color", "c45b3b", "--fl", "brnad"],
    ])
    func unknownQueryField(command: [String]) async throws {
        let run = try await CLI.run(command + ["--catalog", Self.catalog])
        #expect(run.status == 64 && run.stderr.contains("Unknown field brnad") && run.stderr.contains("brand"), "\(run.stderr)")
        #expect(run.stdout.isEmpty)
        let json = try await CLI.run(command + ["--catalog", Self.catalog, "--json"])
        #expect(json.status == 64 && Self.json(json.stdout)["status"] as? String == "fail")
    }

    @Test("--schema naming a field that is neither a metadata column nor declared is refused, and no phantom field appears")
    func unknownSchemaField() async throws {
        let catalog = CLI.temporaryDirectory() + "/catalog.sqlite"
        let run = try await CLI.run(["index", Self.corpus, "--metadata", CLI.repository + "/corpus/catalog.csv", "--catalog", catalog,
                               "--schema", "prcie:int"])
        #expect(run.status == 64 && run.stderr.contains("Unknown field prcie") && run.stderr.contains("price"), "\(run.stderr)")
        let stats = Self.json(try await CLI.run(["catalog", "stats", "--catalog", catalog, "--json"]).stdout)
        #expect((stats["fields"] as? [String: String])?["prcie"] == nil)
    }

    // MARK: - 16. Messages

    @Test("an unknown command is named, with the nearest one")
    func unknownCommand() async throws {
        let run = try await CLI.run(["serach", "--image", "x.jpg"])
        #expect(run.status == 64 && run.stderr.contains("unknown command 'serach'") && run.stderr.contains("Did you mean 'search'?"), "\(run.stderr)")
        #expect(!run.stderr.contains("--image"))
    }

    @Test("colour is color; --hex is accepted for the colour")
    func colorAlias() async throws {
        let british = try await CLI.run(["colour", "ff0000", "--catalog", Self.catalog, "--json"])
        let american = try await CLI.run(["color", "ff0000", "--catalog", Self.catalog, "--json"])
        let option = try await CLI.run(["color", "--hex", "ff0000", "--catalog", Self.catalog, "--json"])
        #expect(british.status == 0 && american.status == 0 && option.status == 0, "\(british.stderr) \(option.stderr)")
        #expect(Self.json(british.stdout)["result"] as? NSArray == Self.json(american.stdout)["result"] as? NSArray)
        #expect(Self.json(option.stdout)["result"] as? NSArray == Self.json(american.stdout)["result"] as? NSArray)
    }

    @Test("missing inputs exit 66 for every command: index, thumbs, --metadata, info")
    func missingInputs() async throws {
        let missing = CLI.temporaryDirectory() + "/nope"
        let index = try await CLI.run(["index", missing, "--catalog", CLI.temporaryDirectory() + "/c.sqlite"])
        let thumbs = try await CLI.run(["thumbs", missing, CLI.temporaryDirectory()])
        let metadata = try await CLI.run(["index", Self.corpus, "--metadata", missing + ".csv", "--catalog", CLI.temporaryDirectory() + "/c.sqlite"])
        #expect(index.status == 66 && thumbs.status == 66 && metadata.status == 66, "\(index.status) \(thumbs.status) \(metadata.status)")
        #expect(metadata.stderr.contains("--metadata \(missing).csv: no such file"))
        let info = try await CLI.run(["info", missing + ".jpg"])
        #expect(info.status == 66 && info.stdout.isEmpty, "\(info.status) \(info.stdout)")
        #expect(info.stderr.components(separatedBy: "nope.jpg").count == 2, "the name once: \(info.stderr)")
    }

    @Test("a folder as --catalog says so (66), not 'disk I/O error'")
    func folderAsCatalog() async throws {
        let folder = CLI.temporaryDirectory()
        let run = try await CLI.run(["similar", "chelsea_cat", "--catalog", folder])
        #expect(run.status == 66 && run.stderr.contains("is a folder") && run.stderr.contains("catalog.sqlite"), "\(run.stderr)")
        #expect(!run.stderr.contains("disk I/O"))
    }

    @Test("info prints alpha, profile and warnings in its text line too")
    func infoText() async throws {
        let run = try await CLI.run(["info", Self.corpus + "/astronaut.jpg"])
        #expect(run.status == 0 && run.stdout.contains("alpha no") && run.stdout.contains("profile "), "\(run.stdout)")
    }

    // MARK: - 17. Success reported only when it happened

    @Test("an interrupted index says so and that a re-run continues; exit 130")
    func interruptedIndex() async throws {
        let arguments = ["index", Self.corpus, "--catalog", CLI.temporaryDirectory() + "/c.sqlite", "--batch-size", "1", "--jobs", "1"]
        let (_, outcome) = try await CLI.withRunning(arguments) { index in
            _ = try await index.line { $0 == "committed 1" }
            index.signal(SIGINT)
        }
        #expect(outcome.status == 130, "\(outcome.stderr)")
        #expect(outcome.stderr.contains("interrupted after") && outcome.stderr.contains("run the same command again to continue"), "\(outcome.stderr)")
    }

    @Test("index of a folder with no images refuses and creates no catalog")
    func emptyFolder() async throws {
        let catalog = CLI.temporaryDirectory() + "/c.sqlite"
        let run = try await CLI.run(["index", CLI.temporaryDirectory(), "--catalog", catalog])
        #expect(run.status == 66 && run.stderr.contains("holds no image files"), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: catalog))
    }

    @Test("prepare FOLDER name.jpg is refused instead of making a folder named name.jpg")
    func prepareFolderIntoFileName() async throws {
        let output = CLI.temporaryDirectory() + "/up3.jpg"
        let run = try await CLI.run(["prepare", try Self.folder(["a.jpg": "astronaut.jpg"]), output])
        #expect(run.status == 64 && run.stderr.contains("give an output folder"), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    @Test("re-indexing unchanged files prints no line per file, only the summary")
    func unchangedSummarised() async throws {
        let input = try Self.folder(["a.jpg": "astronaut.jpg", "b.jpg": "coffee_cup.jpg"])
        let catalog = CLI.temporaryDirectory() + "/c.sqlite"
        #expect(try await CLI.run(["index", input, "--catalog", catalog]).status == 0)
        let again = try await CLI.run(["index", input, "--catalog", catalog])
        #expect(again.status == 0)
        #expect(!again.stderr.contains("ok "), "\(again.stderr)")
        #expect(again.stderr.contains("2 files: 0 indexed, 2 unchanged, 0 failed") && again.stderr.contains("has 2 images"))
        let one = try await CLI.run(["index", try Self.folder(["a.jpg": "astronaut.jpg"]), "--catalog", CLI.temporaryDirectory() + "/d.sqlite"])
        #expect(one.stderr.contains("1 file: 1 indexed") && one.stderr.contains("has 1 image ("), "\(one.stderr)")
    }

    // MARK: - 18. Answers that agree with themselves

    @Test("discover prints each object's own count and results, and takes --result-limit, not --limit")
    func discoverPerObject() async throws {
        let image = Self.corpus + "/astronaut.jpg"
        let run = try await CLI.run(["discover", "--image", image, "--point", "120,80", "--result-limit", "3", "--catalog", Self.catalog])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(!run.stdout.contains("past the last page") && run.stdout.contains(": 1 object"), "\(run.stdout)")
        #expect(run.stdout.contains("object point") && run.stdout.contains("102 matches, showing 1–3 (page 1 of 34)"), "\(run.stdout)")
        let limit = try await CLI.run(["discover", "--image", image, "--limit", "3", "--catalog", Self.catalog])
        #expect(limit.status == 64 && limit.stderr.contains("--result-limit"))
    }

    @Test("a colour search counts only images with some of the colour, each scoring above 0")
    func colorMatches() async throws {
        let run = try await CLI.run(["color", "ff00ff", "--catalog", Self.catalog, "--json", "--limit", "1000"])
        let response = Self.json(run.stdout)
        let results = response["result"] as? [[String: Any]] ?? []
        #expect(run.status == 0 && (response["total"] as? Int ?? -1) < 102)
        #expect(results.count == response["total"] as? Int && results.allSatisfy { ($0["score"] as? Double ?? 0) > 0 })
    }

    @Test("with --dedup the table says its count is of matches before near-duplicates were dropped; without, it does not")
    func dedupCount() async throws {
        let deduplicated = try await CLI.run(["similar", "chelsea_cat", "--catalog", Self.catalog, "--dedup", "--limit", "3"])
        #expect(deduplicated.status == 0 && deduplicated.stdout.contains("matches before near-duplicates were dropped"), "\(deduplicated.stdout)")
        let plain = try await CLI.run(["similar", "chelsea_cat", "--catalog", Self.catalog, "--limit", "3"])
        #expect(plain.status == 0 && plain.stdout.contains("matches, showing") && !plain.stdout.contains("near-duplicates"))
    }

    // MARK: - 19. Help at 80 columns

    @Test("help at 80 columns: paragraphs wrap evenly, examples are whole lines, no contradicting default", arguments: [
        ["--help"], ["index", "--help"], ["thumbs", "--help"], ["prepare", "--help"], ["track", "--help"], ["serve", "--help"],
        ["discover", "--help"], ["insert", "--help"], ["catalog", "migrate", "--help"], ["info", "--help"],
    ])
    func help(command: [String]) async throws {
        let run = try await CLI.run(command, environment: ["COLUMNS": "80"])
        #expect(run.status == 0)
        let overview = run.stdout.components(separatedBy: "USAGE:").first ?? ""
        let lines = overview.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        for (index, line) in lines.enumerated() {
            #expect(line.count <= 80, "\(line)")
            // Inside a paragraph (not indented, followed by more of it), a line is as full as a greedy
            // wrap at 80 columns leaves it: the next line's first word would not have fitted. A text
            // wrapped by hand and then again by ArgumentParser breaks this (ragged lines).
            let next = index + 1 < lines.count ? lines[index + 1] : ""
            if !line.hasPrefix(" "), !line.isEmpty, !next.isEmpty, !next.hasPrefix(" "), !line.hasSuffix(":"), !next.hasSuffix(":") {
                let word = next.split(separator: " ").first.map(String.init) ?? ""
                #expect(line.count + 1 + word.count >= 80, "ragged line in \(command): \"\(line)\" then \"\(word)\"")
            }
        }
        #expect(!run.stdout.contains("number of cores. (default:"), "\(command)")
        if command == ["track", "--help"] {
            #expect(run.stdout.contains("--pid dress_17 \\\n    --im-url https://cdn.example/dress_17.jpg --pos 3 \\\n"), "\(run.stdout)")
        }
    }

    // MARK: - 20. Smaller

    @Test("--version and the server's Server header say the same version")
    func oneVersion() async throws {
        let version = try await CLI.run(["--version"]).stdout.split(separator: " ").dropFirst().first.map(String.init) ?? ""
        _ = try await ServeCLITests.serving(Self.catalog) { url, server in
            let (_, response) = try await URLSession.shared.data(from: URL(string: url + "/health")!)
            #expect((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Server") == "vsearch/\(version)", "\(version)")
        }
    }

    @Test("catalog remove names the im_names it did not have")
    func removeNamesMissing() async throws {
        let catalog = CLI.temporaryDirectory() + "/c.sqlite"
        #expect(try await CLI.run(["index", try Self.folder(["a.jpg": "astronaut.jpg", "b.jpg": "coffee_cup.jpg"]), "--catalog", catalog]).status == 0)
        let run = try await CLI.run(["catalog", "remove", "a", "nosuch", "--catalog", catalog])
        #expect(run.status == 1 && run.stdout.contains("removed 1 of 2") && run.stderr.contains("not in the catalog: nosuch"), "\(run.stderr)")
    }

    @Test("catalog export → index --metadata is a round trip: the same fields, types and values")
    func exportRoundTrip() async throws {
        let exported = try await CLI.run(["catalog", "export", "--catalog", Self.catalog])
        #expect(exported.status == 0)
        let first = Self.json(String(exported.stdout.split(separator: "\n")[0]))
        #expect(first["source"] == nil && first["price"] is NSNumber && first["count"] is NSNumber, "\(first)")
        let items = CLI.temporaryDirectory() + "/items.jsonl"
        try exported.stdout.write(toFile: items, atomically: true, encoding: .utf8)
        let copy = CLI.temporaryDirectory() + "/copy.sqlite"
        let index = try await CLI.run(["index", Self.corpus, "--metadata", items, "--catalog", copy])
        #expect(index.status == 0, "\(index.stderr)")
        let original = Self.json(try await CLI.run(["catalog", "stats", "--catalog", Self.catalog, "--json"]).stdout)["fields"] as? NSDictionary
        let copied = Self.json(try await CLI.run(["catalog", "stats", "--catalog", copy, "--json"]).stdout)["fields"] as? NSDictionary
        #expect(original == copied)
        #expect(try await CLI.run(["catalog", "export", "--catalog", copy]).stdout == exported.stdout)
    }

    @Test("track: validation names the flag, --app-key is taken and --code still works")
    func trackFlags() async throws {
        let queue = CLI.temporaryDirectory() + "/q.sqlite"
        let missing = try await CLI.run(["track", "product_click", "--query-id", "q", "--pid", "p", "--pos", "1", "--no-send", "--queue", queue])
        #expect(missing.status == 64 && missing.stderr.contains("--im-url") && !missing.stderr.contains("imgUrl"), "\(missing.stderr)")
        for key in ["--app-key", "--code"] {
            let run = try await CLI.run(["track", "click", "--query-id", "q", key, "APP", "--no-send", "--queue", queue])
            #expect(run.status == 0, "\(key): \(run.stderr)")
        }
    }

    @Test("a malformed postgresql:// --catalog is a usage error (64)")
    func badCatalogURL() async throws {
        for command in [["similar", "x"], ["catalog", "stats"], ["serve", "--port", "0"]] {
            let run = try await CLI.run(command + ["--catalog", "postgresql://u@127.0.0.1:9/db?knn=bogus"])
            #expect(run.status == 64 && run.stderr.contains("knn=bogus"), "\(command): \(run.stderr)")
        }
    }

    @Test("with --json, a missing catalog prints the API's failure shape on stdout")
    func jsonFailureShape() async throws {
        let run = try await CLI.run(["similar", "chelsea_cat", "--catalog", CLI.temporaryDirectory() + "/none.sqlite", "--json"])
        let answer = Self.json(run.stdout)
        #expect(run.status == 66 && answer["status"] as? String == "fail" && (answer["error"] as? [String])?.first?.contains("no catalog") == true,
                "\(run.stdout)")
    }

    @Test("insert --wait and insert-status agree on a failed image (exit 1), and name it once")
    func insertStatusAgrees() async throws {
        let catalog = CLI.temporaryDirectory() + "/c.sqlite"
        #expect(try await CLI.run(["index", try Self.folder(["a.jpg": "astronaut.jpg"]), "--catalog", catalog]).status == 0)
        _ = try await ServeCLITests.serving(catalog, ["--image-root", Self.corpus]) { url, server in
            let insert = try await CLI.run(["insert", "new_cat=file://" + Self.corpus + "/no_such_cat.jpg", "--endpoint", url, "--wait"])
            #expect(insert.status == 1, "\(insert.stdout) \(insert.stderr)")
            #expect(!insert.stderr.contains("new_cat: new_cat:"), "\(insert.stderr)")
            let id = insert.stdout.components(separatedBy: "trans_id ").dropFirst().first?.split(separator: "\n").first.map(String.init) ?? ""
            let status = try await CLI.run(["insert-status", id, "--endpoint", url])
            #expect(status.status == 1 && !status.stderr.contains("new_cat: new_cat:"), "\(id) \(status.stdout) \(status.stderr)")
        }
    }

    @Test("serve --json-logs: every line of the log is JSON")
    func jsonLogs() async throws {
        let (_, outcome) = try await ServeCLITests.serving(Self.catalog, ["--json-logs"]) { url, _ in
            _ = try await CLI.run(["similar", "chelsea_cat", "--endpoint", url])
        }
        let lines = outcome.stderr.split(separator: "\n")
        #expect(lines.count >= 3)
        for line in lines { #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) is [String: Any], "\(line)") }
    }

    @Test("one spelling per concept: --im-url and --max-image-megapixels; the old --img-url and --max-pixels still work for one release, hidden from help; a limit error names the flag, not the library's setting")
    func renamedOptions() async throws {
        let queue = CLI.temporaryDirectory() + "/queue.sqlite"
        for spelling in ["--im-url", "--img-url"] {
            let run = try await CLI.run(["track", "product_click", "--query-id", "1", "--pid", "p", spelling, "https://shop.example/p.jpg",
                                         "--pos", "1", "--no-send", "--queue", queue])
            #expect(run.status == 0, "\(spelling): \(run.stderr)")
        }
        let trackHelp = try await CLI.run(["track", "send", "--help"])
        #expect(trackHelp.stdout.contains("--im-url") && !trackHelp.stdout.contains("--img-url"), "\(trackHelp.stdout)")
        let thumbsHelp = try await CLI.run(["thumbs", "make", "--help"])
        #expect(thumbsHelp.stdout.contains("--max-image-megapixels") && !thumbsHelp.stdout.contains("--max-pixels"), "\(thumbsHelp.stdout)")

        let input = try CLI.makeInput()  // sub/large.jpg is 1200×900: 1.08 megapixels
        for limit in [["--max-image-megapixels", "1"], ["--max-pixels", "1000000"]] {
            let run = try await CLI.run(["thumbs", input, CLI.temporaryDirectory() + "/out"] + limit)
            #expect(run.status == 1 && run.stderr.contains("large.jpg") && run.stderr.contains("exceeds the pixel limit of 1000000"), "\(run.stderr)")
            #expect(run.stderr.contains("raise --max-image-megapixels") && !run.stderr.contains("ImageLimits"), "\(run.stderr)")
        }
    }
}
