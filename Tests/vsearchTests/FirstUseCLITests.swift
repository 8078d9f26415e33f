import Foundation
import TestSupport
import Testing

/// What a new user meets on the command line (issue 39): a mistake leaves
/// nothing behind that misleads later, and one thing behaves one way
/// whichever command does it.
@Suite("A new user's command line")
struct FirstUseCLITests {
    typealias CLI = CLITests
    typealias Trust = CommandLineTrustTests

    @Test("a --schema naming a field the metadata lacks creates no catalog; a name asked of an empty catalog says the catalog is empty")
    func nothingHalfCreated() async throws {
        let catalog = CLI.temporaryDirectory() + "/new.sqlite"
        let folder = try Trust.folder(["a.jpg": "astronaut.jpg"])
        let typo = try await CLI.run(["index", folder, "--schema", "brnad:string", "--catalog", catalog])
        #expect(typo.status != 0 && typo.stderr.contains("brnad"), "\(typo.stderr)")
        for suffix in ["", "-wal", "-shm"] {
            #expect(!FileManager.default.fileExists(atPath: catalog + suffix), "\(catalog + suffix) was left behind")
        }
        // A catalog that exists but holds nothing: the answer says so instead of a bare "Image not found".
        #expect(try await CLI.run(["index", folder, "--catalog", catalog]).status == 0)
        #expect(try await CLI.run(["remove", "a", "--catalog", catalog]).status == 0)
        let asked = try await CLI.run(["similar", "a", "--catalog", catalog])
        #expect(asked.status == 65 && asked.stderr.contains("holds no images") && asked.stderr.contains("vsearch index"), "\(asked.stderr)")
        // A catalog that holds images answers an unknown name as the service does.
        let other = CLI.temporaryDirectory() + "/other.sqlite"
        #expect(try await CLI.run(["index", folder, "--catalog", other]).status == 0)
        let unknown = try await CLI.run(["similar", "nosuch", "--catalog", other])
        #expect(unknown.status == 65 && unknown.stderr.contains("Image not found") && !unknown.stderr.contains("holds no images"), "\(unknown.stderr)")
    }

    @Test("remove and catalog remove: one behaviour — the missing names listed, exit 1, JSON status warning naming each")
    func removeNamesWhatItLacked() async throws {
        let catalog = CLI.temporaryDirectory() + "/c.sqlite"
        #expect(try await CLI.run(["index", try Trust.folder(["a.jpg": "astronaut.jpg", "b.jpg": "coffee_cup.jpg"]), "--catalog", catalog]).status == 0)
        for (command, present) in [(["remove"], "a"), (["catalog", "remove"], "b")] {
            let text = try await CLI.run(command + ["ghost", "--catalog", catalog])
            #expect(text.status == 1 && text.stdout.contains("removed 0 of 1") && text.stderr.contains("not in the catalog: ghost"),
                    "\(command): \(text.stdout) \(text.stderr)")
            let json = try await CLI.run(command + [present, "phantom", "--catalog", catalog, "--json"])
            let answer = Trust.json(json.stdout)
            #expect(json.status == 1 && answer["status"] as? String == "warning" && answer["total"] as? Int == 1, "\(command): \(json.stdout)")
            let errors = answer["error"] as? [[String: Any]] ?? []
            #expect(errors.count == 1 && errors.first?["im_name"] as? String == "phantom" && errors.first?["index"] as? Int == 1, "\(json.stdout)")
        }
    }

    @Test("insert --field with a field the catalog does not declare is refused (a typo is not a new field); --schema declares it")
    func insertDeclaresExplicitly() async throws {
        let catalog = CLI.temporaryDirectory() + "/c.sqlite"
        #expect(try await CLI.run(["index", try Trust.folder(["a.jpg": "astronaut.jpg"]), "--catalog", catalog]).status == 0)
        let cup = "cup=" + Trust.corpus + "/coffee_cup.jpg"
        let typo = try await CLI.run(["insert", cup, "--field", "nosuchfield=1", "--catalog", catalog])
        #expect(typo.status == 64 && typo.stderr.contains("nosuchfield is not a field of this catalog") && typo.stderr.contains("--schema"),
                "\(typo.stderr)")
        #expect(try await CLI.run(["similar", "cup", "--catalog", catalog]).status == 65)   // nothing was inserted
        let declared = try await CLI.run(["insert", cup, "--field", "weight=3", "--schema", "weight:int", "--catalog", catalog])
        #expect(declared.status == 0, "\(declared.stderr)")
        let found = try await CLI.run(["similar", "a", "--fq", "weight:1,5", "--catalog", catalog, "--json"])
        #expect(found.status == 0 && found.stdout.contains("\"cup\""), "\(found.stdout) \(found.stderr)")
    }

    @Test("one value that is not a number keeps the field numeric: that image is reported, the others filter by range")
    func oneBadValueIsReported() async throws {
        let names = ["astronaut", "cameraman", "chelsea_cat", "china_temple", "coffee_cup", "falcon9_rocket", "flower_dahlia",
                     "grace_hopper", "greek_coins", "hubble_deep_field", "ihc_stain"]
        let folder = try Trust.folder(Dictionary(uniqueKeysWithValues: names.map { ($0 + ".jpg", $0 + ".jpg") }))
        let rows = names.enumerated().map { "\($0.element),\($0.element == "coffee_cup" ? "notanumber" : String(($0.offset + 1) * 20))" }
        let metadata = CLI.temporaryDirectory() + "/items.csv"
        try (["im_name,price"] + rows).joined(separator: "\n").write(toFile: metadata, atomically: true, encoding: .utf8)
        let catalog = CLI.temporaryDirectory() + "/c.sqlite"
        let run = try await CLI.run(["index", folder, "--metadata", metadata, "--catalog", catalog])
        #expect(run.status == 1 && run.stderr.contains("coffee_cup") && run.stderr.contains("notanumber"), "\(run.stderr)")
        let stats = try await CLI.run(["catalog", "stats", "--catalog", catalog, "--json"])
        #expect(stats.stdout.contains("\"price\" : \"int\"") || stats.stdout.contains("\"price\":\"int\""), "\(stats.stdout)")
        let ranged = try await CLI.run(["similar", "astronaut", "--fq", "price:10,300", "--limit", "20", "--catalog", catalog, "--json"])
        // The ten images indexed (coffee_cup was refused) are priced 20–220: the range finds every one.
        let results = (Trust.json(ranged.stdout)["result"] as? [[String: Any]] ?? []).compactMap { $0["im_name"] as? String }
        #expect(Set(results).count == 10 && !results.contains("coffee_cup"), "\(ranged.stdout)")
    }

    @Test("a remote --fl typo is warned about, as a remote --facets typo is; the local catalog refuses both")
    func remoteFieldTypoWarns() async throws {
        let catalog = EngineCLITests.catalogPath()
        try await EngineCLITests.indexCorpus(catalog)
        let local = try await CLI.run(["similar", "chelsea_cat", "--fl", "brnad", "--catalog", catalog])
        #expect(local.status == 64 && local.stderr.contains("brnad"), "\(local.stderr)")
        _ = try await ServeCLITests.serving(catalog) { url, _ in
            for flag in ["--fl", "--facets"] {
                let remote = try await CLI.run(["similar", "chelsea_cat", flag, "brnad", "--endpoint", url])
                #expect(remote.status == 0 && remote.stderr.contains("warning:") && remote.stderr.contains("Unknown field brnad"),
                        "\(flag): \(remote.stderr)")
            }
            // Several typos: one warning naming them all, the declared fields listed once.
            let two = try await CLI.run(["similar", "chelsea_cat", "--fl", "brnad", "--fl", "prise", "--fl", "brnad", "--endpoint", url])
            #expect(two.stderr.components(separatedBy: "warning:").count == 2 && two.stderr.contains("Unknown field brnad, prise:")
                        && two.stderr.components(separatedBy: "(fields:").count == 2, "\(two.stderr)")
        }
    }

    @Test("a folder where a file is expected: one message and exit 66 from every command; an empty input folder is 66 for index, thumbs and prepare")
    func foldersAndEmptyFolders() async throws {
        let catalog = EngineCLITests.catalogPath()
        let folder = try Trust.folder(["a.jpg": "astronaut.jpg"])
        #expect(try await CLI.run(["index", folder, "--catalog", catalog]).status == 0)
        let empty = CLI.temporaryDirectory() + "/empty"
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        for (arguments, role) in [(["search", "--image", empty, "--catalog", catalog], "--image"),
                                  (["index", folder, "--metadata", empty, "--catalog", catalog], "--metadata"),
                                  (["prepare", Trust.corpus + "/astronaut.jpg", empty], "OUTPUT")] {
            let run = try await CLI.run(arguments)
            #expect(run.status == 66 && run.stderr.contains("\(role) \(empty) is a folder; it takes a file"), "\(arguments): \(run.stderr)")
        }
        for arguments in [["index", empty, "--catalog", CLI.temporaryDirectory() + "/e.sqlite"],
                          ["thumbs", empty, CLI.temporaryDirectory() + "/thumbs"], ["prepare", empty, CLI.temporaryDirectory() + "/prepared"]] {
            let run = try await CLI.run(arguments)
            #expect(run.status == 66 && run.stderr.contains("holds no image files (vsearch reads .avif"), "\(arguments): \(run.stderr)")
            // It lists what vsearch reads, not the BMP and TIFF files it refuses.
            #expect(!run.stderr.contains(".bmp") && !run.stderr.contains(".tif"), "\(run.stderr)")
        }
    }

    @Test("output: product's table has a header and aligned columns; info FILE --json is pretty; a no-op re-run prints no committed 0; serve counts keys in words")
    func outputReadsWell() async throws {
        let catalog = EngineCLITests.catalogPath()
        try await EngineCLITests.indexCorpus(catalog)
        let product = try await CLI.run(["product", "search", "--image", Trust.corpus + "/chelsea_cat.jpg", "--limit", "3", "--catalog", catalog])
        let lines = product.stdout.split(separator: "\n").map(String.init)
        #expect(product.status == 0 && lines.count == 5 && lines[1].hasPrefix("#  product_id"), "\(product.stdout) \(product.stderr)")
        // Every score column starts at the same place.
        let scoreColumns = Set(lines.dropFirst(2).compactMap { line in line.range(of: " 0.")?.lowerBound.utf16Offset(in: line) })
        #expect(scoreColumns.count == 1, "\(product.stdout)")
        let info = try await CLI.run(["info", Trust.corpus + "/chelsea_cat.jpg", "--json"])
        #expect(info.status == 0 && info.stdout.split(separator: "\n").count > 3 && Trust.json(info.stdout)["ok"] as? Bool == true, "\(info.stdout)")
        let again = try await CLI.run(["index", CLI.repository + "/corpus/images", "--metadata", CLI.repository + "/corpus/catalog.csv",
                                       "--catalog", catalog])
        #expect(again.status == 0 && !again.stderr.contains("committed 0") && again.stderr.contains("102 unchanged"), "\(again.stderr)")
        _ = try await ServeCLITests.serving(catalog, ["--app-key", "app-only"]) { _, server in
            let line = try await server.line { $0.contains("auth:") }
            #expect(line.contains("1 app key,") && line.contains("0 access keys"), "\(line)")
        }
    }

    @Test("track names every missing required field at once, and its help lists them per action")
    func trackNamesAllMissing() async throws {
        let run = try await CLI.run(["track", "add_to_cart", "--no-send"])
        #expect(run.status == 64 && run.stderr.contains("--query-id, --pid, --im-url, --pos: required for add_to_cart"), "\(run.stderr)")
        let transaction = try await CLI.run(["track", "transaction", "--query-id", "1", "--no-send"])
        #expect(transaction.status == 64 && transaction.stderr.contains("--transaction-id, --value: required for transaction"), "\(transaction.stderr)")
        let help = try await CLI.run(["track", "send", "--help"])
        #expect(help.stdout.contains("add_to_cart, add_to_wishlist:\n      --query-id --pid --im-url --pos"), "\(help.stdout)")
    }

    @Test("merge-manifests says which part manifests it removed; an old option spelling works and says what replaces it")
    func sayWhatChanged() async throws {
        let folder = try Trust.folder(["a.jpg": "astronaut.jpg", "b.jpg": "coffee_cup.jpg"])
        let output = CLI.temporaryDirectory() + "/thumbs"
        for shard in ["0/2", "1/2"] {
            let part = try await CLI.run(["thumbs", folder, output, "--shard", shard, "--sizes", "64"])
            #expect(part.status == 0, "\(part.stderr)")
        }
        let merged = try await CLI.run(["thumbs", "merge-manifests", output])
        #expect(merged.status == 0 && merged.stderr.contains("removed the parts: manifest.shard-0-of-2.jsonl, manifest.shard-1-of-2.jsonl"),
                "\(merged.stderr)")
        let old = try await CLI.run(["thumbs", folder, CLI.temporaryDirectory() + "/old", "--sizes", "64", "--max-pixels", "50000000"])
        #expect(old.status == 0 && old.stderr.contains("warning: --max-pixels N is the old spelling of --max-image-megapixels"), "\(old.stderr)")
        let url = try await CLI.run(["track", "product_click", "--query-id", "1", "--pid", "a", "--img-url", "https://example.com/a.jpg",
                                     "--pos", "1", "--no-send"], environment: ["VSEARCH_TRACKING_QUEUE": CLI.temporaryDirectory() + "/q.sqlite"])
        #expect(url.status == 0 && url.stderr.contains("warning: --img-url is the old spelling of --im-url"), "\(url.stderr)")
    }

    @Test("--jobs is -j on every command that has it (it was -r, after the property's name)")
    func jobsIsJ() async throws {
        for command in ["index", "thumbs make", "prepare"] {
            let help = try await CLI.run(command.split(separator: " ").map(String.init) + ["--help"])
            #expect(help.stdout.contains("-j, --jobs") && !help.stdout.contains("-r, --jobs"), "\(command): \(help.stdout)")
        }
    }

    @Test("a mistyped command or option is named with the nearest one, at every level, before anything else is said")
    func typosSuggestTheNearest() async throws {
        let cases: [([String], String)] = [
            (["search", "--img", "x.jpg"], "unknown option '--img' for `vsearch search`. Did you mean '--image'?"),
            (["index", "corpus", "--meta", "m.csv"], "unknown option '--meta' for `vsearch index`. Did you mean '--metadata'?"),
            (["serve", "--keys", "k.txt"], "unknown option '--keys' for `vsearch serve`. Did you mean '--keys-file'?"),
            (["catalog", "stat"], "unknown vsearch catalog command 'stat'. Did you mean 'stats'?"),
            (["thumbs", "merge", "out"], "Did you mean 'vsearch thumbs merge-manifests'?"),
            (["serach", "--image", "x.jpg"], "unknown command 'serach'. Did you mean 'search'?"),
        ]
        for (arguments, expected) in cases {
            let run = try await CLI.run(arguments, directory: CLI.temporaryDirectory())
            #expect(run.status == 64 && run.stderr.contains(expected), "\(arguments): \(run.stderr)")
        }
        // What is right is untouched: a default subcommand's file argument, an option's value, a hidden old spelling.
        let thumbs = try await CLI.run(["thumbs", try Trust.folder(["a.jpg": "astronaut.jpg"]), CLI.temporaryDirectory() + "/t", "--sizes", "64"])
        #expect(thumbs.status == 0, "\(thumbs.stderr)")
        let help = try await CLI.run(["track", "send", "--help"])
        #expect(help.status == 0)
    }

    @Test("help: a command that runs a subcommand by default shows that one's options too; serve spells every default one way")
    func helpShowsWhatIsTyped() async throws {
        let thumbs = try await CLI.run(["thumbs", "--help"])
        #expect(thumbs.status == 0 && thumbs.stdout.contains("merge-manifests") && thumbs.stdout.contains("--sizes"), "\(thumbs.stdout)")
        let track = try await CLI.run(["track", "-h"])
        #expect(track.status == 0 && track.stdout.contains("--query-id") && track.stdout.contains("flush"), "\(track.stdout)")
        let serve = try await CLI.run(["serve", "--help"], environment: ["COLUMNS": "80"])
        #expect(!serve.stdout.contains("(default:") && !serve.stdout.contains("Default:"), "\(serve.stdout)")
        #expect(serve.stdout.split(separator: "\n").allSatisfy { !$0.hasSuffix(":") || $0.count <= 80 }, "a heading wider than 80 columns")
    }

    @Test("--model-dir is offered by the commands that load the model and by no other")
    func modelDirWhereAModelLoads() async throws {
        let loading = ["search", "similar", "recommend", "color", "discover", "product search", "index", "insert", "serve", "info", "catalog stats"]
        let never = ["remove", "insert-status", "catalog remove", "catalog backup", "catalog hnsw", "events stats"]
        for command in loading + never {
            let help = try await CLI.run(command.split(separator: " ").map(String.init) + ["--help"])
            #expect(help.status == 0 && help.stdout.contains("--model-dir") == loading.contains(command), "\(command): \(help.stdout)")
        }
        // Given where no model loads, it is an unknown option, not something silently ignored.
        let removing = try await CLI.run(["remove", "a", "--model-dir", "/tmp", "--catalog", CLI.temporaryDirectory() + "/c.sqlite"])
        #expect(removing.status == 64 && removing.stderr.contains("--model-dir"), "\(removing.stderr)")
    }
}
