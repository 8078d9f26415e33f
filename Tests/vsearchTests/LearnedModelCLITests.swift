import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import TestSupport
import Testing

/// The learned model from the command line, as a user meets it: `vsearch
/// model info|embed`, a missing model (exit 78, the install command named),
/// a damaged one (nothing written), and the same answers from the command
/// line and from `vsearch serve` in every similarity.
@Suite("vsearch model and learned similarity", .serialized,
       .enabled(if: FileManager.default.fileExists(atPath: CLITests.repository + "/.build-tools/models/efficientnet-lite0/model.json")
                    || ProcessInfo.processInfo.environment["CI"] == "true", "the learned model is not installed (scripts/install-model.sh)"))
struct LearnedModelCLITests {
    typealias CLI = CLITests
    static let modelFolder = CLI.repository + "/.build-tools/models/efficientnet-lite0"

    static func object(_ json: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
    }

    @Test("model info --json says how an embedding is made; its checksum is the file's")
    func info() async throws {
        let run = try await CLI.run(["model", "info", "--json"])
        #expect(run.status == 0, "\(run.stderr)")
        let info = try Self.object(run.stdout)
        #expect(info["name"] as? String == "efficientnet-lite0")
        #expect(info["input_size"] as? Int == 224 && info["output_dimension"] as? Int == 1280 && info["dimension"] as? Int == 512)
        #expect(info["resize"] as? String == "pad" && info["runtime_version"] as? String == "1.23.2")
        #expect((info["mean"] as? [Double])?.count == 3 && (info["std"] as? [Double])?.count == 3)
        let sha = try #require(info["sha256"] as? String)
        let file = try #require(info["file"] as? String)
        let digest = try await CLI.run(["model", "embed", "--raw", CLI.repository + "/Tests/Fixtures/embeddings/coffee_cup.png"])
        #expect(digest.status == 0)
        let shaOfFile = try await Self.sha256(file)
        #expect(sha == shaOfFile)
    }

    static func sha256(_ path: String) async throws -> String {
        let run = try await ChildProcess.run("/usr/bin/sha256sum", [path])
        return run.stdout.split(separator: " ").first.map(String.init) ?? ""
    }

    @Test("model embed --raw reproduces onnxruntime's output of the int8 model (cosine ≥ 0.99999) and PyTorch's float32 embedding within int8's rounding (≥ 0.99)")
    func embedReproducesTheReference() async throws {
        let fixtures = CLI.repository + "/Tests/Fixtures/embeddings"
        let run = try await CLI.run(["model", "embed", "--raw", fixtures + "/chelsea_cat.png", fixtures + "/coffee_cup.png"])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        func cosine(_ a: [Double], _ b: [Double]) -> Double {
            zip(a, b).reduce(0) { $0 + $1.0 * $1.1 } / (a.reduce(0) { $0 + $1 * $1 } * b.reduce(0) { $0 + $1 * $1 }).squareRoot()
        }
        for (line, name) in zip(lines, ["chelsea_cat", "coffee_cup"]) {
            let vector = try #require(try Self.object(String(line))["vector"] as? [Double])
            let pytorch = try #require(try Self.object(String(contentsOfFile: fixtures + "/reference-\(name).json", encoding: .utf8))["embedding"] as? [Double])
            let onnxruntime = try #require(try Self.object(String(contentsOfFile: fixtures + "/reference-int8-\(name).json", encoding: .utf8))["embedding"] as? [Double])
            #expect(cosine(vector, pytorch) >= 0.99, "\(name)")
            #expect(cosine(vector, onnxruntime) >= 0.99999, "\(name)")
        }
        let unit = try await CLI.run(["model", "embed", fixtures + "/chelsea_cat.png"])
        #expect((try Self.object(unit.stdout)["dimension"] as? Int) == 512)
    }

    @Test("no model where it is asked for: 78 and the install command; the catalog is left alone")
    func missingModel() async throws {
        let catalog = EngineCLITests.catalogPath()
        let nowhere = CLI.temporaryDirectory() + "/no-model"
        let index = try await CLI.run(["index", CLI.repository + "/corpus/images", "--catalog", catalog, "--model-dir", nowhere])
        #expect(index.status == 78 && index.stderr.contains("vsearch model install"), "\(index.stderr)")
        #expect(!FileManager.default.fileExists(atPath: catalog))
        let info = try await CLI.run(["model", "info", "--model-dir", nowhere])
        #expect(info.status == 78 && info.stderr.contains("vsearch model install"))
        try await EngineCLITests.indexCorpus(catalog)
        let upload = try await CLI.run(["search", "--image", CLI.repository + "/corpus/images/coffee_cup.jpg", "--catalog", catalog,
                                  "--similarity", "visual", "--model-dir", nowhere])
        #expect(upload.status == 78 && upload.stderr.contains("vsearch model install"), "\(upload.stderr)")
    }

    @Test("model install runs from PATH; the folder it installs into is what --model-dir and VSEARCH_MODEL_DIR take; info lists where it looked")
    func installedWhereItWasPut() async throws {
        let folder = CLI.temporaryDirectory() + "/models-here"
        try FileManager.default.createDirectory(atPath: folder + "/models", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Self.modelFolder, toPath: folder + "/models/efficientnet-lite0")
        try FileManager.default.copyItem(atPath: CLI.repository + "/.build-tools/onnxruntime", toPath: folder + "/onnxruntime")
        // `vsearch` found through PATH, started outside the clone: the installer is the clone's; the model is there already.
        let bin = (CLI.binary as NSString).deletingLastPathComponent
        let install = try await ChildProcess.run("/usr/bin/env", ["vsearch", "model", "install", "--dir", folder],
                                                 environment: ["PATH": bin + ":/usr/bin:/bin"], directory: CLI.temporaryDirectory())
        #expect(install.status == 0, "\(install.stderr)")
        #expect(install.stderr.contains("export VSEARCH_MODEL_DIR=\(folder)"), "\(install.stderr)")
        let given = try await CLI.run(["model", "info", "--model-dir", folder, "--json"])
        #expect(given.status == 0, "\(given.stderr)")
        let report = try Self.object(given.stdout)
        #expect((report["file"] as? String)?.hasPrefix(folder + "/models/efficientnet-lite0/") == true, "\(given.stdout)")
        #expect((report["looked"] as? [String])?.first == folder, "\(given.stdout)")
        let exported = try await CLI.run(["model", "info"], environment: ["VSEARCH_MODEL_DIR": folder])
        #expect(exported.status == 0 && exported.stdout.contains(folder + "/models/efficientnet-lite0 (used)"), "\(exported.stdout)")
        #expect(exported.stdout.contains("looked in"), "\(exported.stdout)")
    }

    @Test("a learned catalog queried without the model says so on every query, and its table names the similarity that answered")
    func learnedCatalogWithoutModel() async throws {
        let catalog = EngineCLITests.catalogPath()
        try await EngineCLITests.indexCorpus(catalog)
        let missing = ["VSEARCH_MODEL_DIR": CLI.temporaryDirectory() + "/no-model"]
        for command in [["similar", "chelsea_cat"], ["search", "--image", CLI.repository + "/corpus/images/coffee_cup.jpg"]] {
            let run = try await CLI.run(command + ["--catalog", catalog, "--limit", "3"], environment: missing)
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.stdout.contains("by color similarity"), "\(run.stdout)")
            #expect(run.stderr.contains("warning: the catalog holds learned vectors") && run.stderr.contains("vsearch model install"), "\(run.stderr)")
        }
        let installed = try await CLI.run(["similar", "chelsea_cat", "--catalog", catalog, "--limit", "3"])
        #expect(installed.stdout.contains("by visual similarity") && !installed.stderr.contains("warning"), "\(installed.stderr)")
    }

    @Test("a damaged model: a typed error, exit 74, and no catalog is created")
    func damagedModel() async throws {
        let copy = CLI.temporaryDirectory() + "/model"
        try FileManager.default.copyItem(atPath: Self.modelFolder, toPath: copy)
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: copy + "/model.onnx"))
        try handle.seek(toOffset: 1_000_000)
        try handle.write(contentsOf: Data([0x42, 0x42, 0x42]))
        try handle.close()
        let catalog = EngineCLITests.catalogPath()
        let index = try await CLI.run(["index", CLI.repository + "/corpus/images", "--catalog", catalog, "--model-dir", copy])
        #expect(index.status == 74 && index.stderr.contains("SHA-256") && index.stderr.contains("--force"), "\(index.stderr)")
        #expect(!FileManager.default.fileExists(atPath: catalog))
    }

    @Test("catalog stats says what the catalog holds; a colour-only index keeps the learned vectors")
    func stats() async throws {
        let catalog = EngineCLITests.catalogPath()
        try await EngineCLITests.indexCorpus(catalog)
        let stats = try await CLI.run(["catalog", "stats", "--catalog", catalog, "--json"])
        let report = try Self.object(stats.stdout)
        #expect(report["learned_images"] as? Int == 102)
        #expect((report["learned_model"] as? [String: Any])?["dimension"] as? Int == 512)
        let again = try await CLI.run(["index", CLI.repository + "/corpus/images", "--catalog", catalog, "--color-only"])
        #expect(again.status == 0 && again.stderr.contains("102 unchanged"), "\(again.stderr)")
        let text = try await CLI.run(["catalog", "stats", "--catalog", catalog])
        #expect(text.stdout.contains("learned   102 of 102 images"), "\(text.stdout)")
        // `vsearch info` with no file: the catalog, its vectors, the default similarity and the installed model.
        let info = try await CLI.run(["info", "--catalog", catalog, "--json"])
        let setup = try Self.object(info.stdout)
        #expect(setup["images"] as? Int == 102 && setup["learned_images"] as? Int == 102 && setup["default_similarity"] as? String == "visual")
        #expect((setup["installed_model"] as? [String: Any])?["sha256"] as? String == (setup["learned_model"] as? [String: Any])?["sha256"] as? String)
        let plain = try await CLI.run(["info", "--catalog", catalog])
        #expect(plain.status == 0 && plain.stdout.contains("colour + learned (efficientnet-lite0@") && plain.stdout.contains("similarity visual"),
                "\(plain.stdout)")
    }

    @Test("the command line and vsearch serve answer alike in every similarity; the server says what it serves")
    func servedEqualsLocal() async throws {
        let catalog = EngineCLITests.catalogPath()
        try await EngineCLITests.indexCorpus(catalog)
        _ = try await ServeCLITests.serving(catalog) { url, server in
            let startup = try await server.line { $0.contains("similarity:") }  // printed after the listening line
            #expect(startup.contains("similarity: visual by default") && startup.contains("for 102 of 102 images"), "\(startup)")
            for similarity in ["visual", "color", "fused"] {
                for command in [["similar", "tp_clothes_hats_sombrero"], ["recommend", "tp_hobbies_music_string_guitar2"],
                                ["search", "--image", CLI.repository + "/corpus/images/chelsea_cat.jpg"]] {
                    let options = ["--similarity", similarity, "--limit", "5", "--fl", "brand", "--json"]
                    let local = try await CLI.run(command + options + ["--catalog", catalog])
                    let remote = try await CLI.run(command + options + ["--endpoint", url])
                    #expect(local.status == 0 && remote.status == 0, "\(local.stderr) \(remote.stderr)")
                    #expect(try ServeCLITests.withoutRequestID(local.stdout) == ServeCLITests.withoutRequestID(remote.stdout), "\(command) \(similarity)")
                    #expect(try Self.object(local.stdout)["similarity"] as? String == similarity)
                }
            }
            let hats = try await CLI.run(["similar", "tp_clothes_hats_sombrero", "--limit", "4", "--json", "--endpoint", url])
            let names = try #require(try Self.object(hats.stdout)["result"] as? [[String: Any]]).compactMap { $0["im_name"] as? String }
            #expect(names.filter { $0.hasPrefix("tp_clothes_hats") }.count >= 3, "\(names)")
        }
    }

    @Test("a server without the model starts colour-only and says so; a visual upload is refused naming the install command")
    func serverWithoutModel() async throws {
        let catalog = EngineCLITests.catalogPath()
        try await EngineCLITests.indexCorpus(catalog)
        _ = try await ServeCLITests.serving(catalog, ["--model-dir", CLI.temporaryDirectory() + "/no-model"]) { url, server in
            let startup = try await server.line { $0.contains("serving colour similarity only") }
            #expect(startup.contains("serving colour similarity only") && startup.contains("vsearch model install"), "\(startup)")
            #expect(startup.contains("although the catalog holds learned vectors"), "\(startup)")
            let plain = try await CLI.run(["similar", "chelsea_cat", "--json", "--endpoint", url])
            let answer = try Self.object(plain.stdout)
            #expect(answer["similarity"] as? String == "color")
            // Status OK (an SDK drops the results of any other), the reason beside `similarity`.
            #expect(answer["status"] as? String == "OK" && (answer["similarity_note"] as? String)?.contains("the learned model is not installed") == true,
                    "\(answer)")
            let (body, _) = try await URLSession.shared.data(from: try #require(URL(string: url + "/health")))
            let health = try Self.object(String(decoding: body, as: UTF8.self))
            #expect((health["warning"] as? String)?.contains("answered by colour") == true, "\(health)")
            let upload = try await CLI.run(["search", "--image", CLI.repository + "/corpus/images/coffee_cup.jpg", "--similarity", "visual",
                                      "--endpoint", url])
            #expect(upload.status != 0 && upload.stderr.contains("vsearch model install"), "\(upload.stderr)")
        }
    }
}
