import Foundation
import Testing
import TestSupport

/// `--shard i/n` on `thumbs` and `index`: n runs, each taking its part, do
/// together exactly what one run does.
@Suite("vsearch batch jobs in shards", .serialized, .timeLimit(.minutes(10)))
struct ShardCLITests {
    typealias CLI = CLITests

    @Test("thumbs: three shards write exactly the files of one run, byte for byte, once their manifests are merged")
    func thumbs() async throws {
        let input = CLI.repository + "/corpus/images"
        let whole = CLI.temporaryDirectory() + "/whole", sharded = CLI.temporaryDirectory() + "/sharded"
        #expect(try await CLI.run(["thumbs", input, whole]).status == 0)
        var parts: [Int] = []
        for index in 0..<3 {
            let run = try await CLI.run(["thumbs", input, sharded, "--shard", "\(index)/3", "--json"])
            #expect(run.status == 0, "\(run.stderr)")
            let summary = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
            parts.append(summary?["sources"] as? Int ?? -1)
            #expect((summary?["manifest"] as? String)?.hasSuffix("manifest.shard-\(index)-of-3.jsonl") == true)
        }
        #expect(parts.reduce(0, +) == 102 && parts.allSatisfy { $0 > 0 }, "\(parts)")
        let merge = try await CLI.run(["thumbs", "merge-manifests", sharded, "--json"])
        #expect(merge.status == 0, "\(merge.stderr)")
        let files = CLI.files(under: whole)
        #expect(CLI.files(under: sharded) == files)
        for file in files {
            #expect(FileManager.default.contentsEqual(atPath: whole + "/" + file, andPath: sharded + "/" + file), "\(file)")
        }
    }

    @Test("thumbs merge-manifests refuses a missing shard, naming it, and changes nothing")
    func incompleteMerge() async throws {
        let output = CLI.temporaryDirectory() + "/out"
        #expect(try await CLI.run(["thumbs", CLI.repository + "/corpus/images", output, "--shard", "1/3"]).status == 0)
        let merge = try await CLI.run(["thumbs", "merge-manifests", output])
        #expect(merge.status == 66 && merge.stderr.contains("manifest.shard-0-of-3.jsonl"), "\(merge.stderr)")
        #expect(!FileManager.default.fileExists(atPath: output + "/manifest.jsonl"))
    }

    @Test("index: three shards into one catalog equal one full run (same images, metadata and answers)")
    func index() async throws {
        let images = CLI.repository + "/corpus/images", metadata = CLI.repository + "/corpus/catalog.csv"
        let whole = CLI.temporaryDirectory() + "/whole.sqlite", sharded = CLI.temporaryDirectory() + "/sharded.sqlite"
        #expect(try await CLI.run(["index", images, "--metadata", metadata, "--catalog", whole, "--quiet"]).status == 0)
        var indexed = 0
        for index in 0..<3 {
            let run = try await CLI.run(["index", images, "--metadata", metadata, "--catalog", sharded, "--shard", "\(index)/3", "--json"])
            #expect(run.status == 0, "\(run.stderr)")
            let summary = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
            indexed += summary?["indexed"] as? Int ?? 0
            #expect((summary?["unmatched_metadata"] as? [Any])?.isEmpty == true, "rows of other shards are not unmatched")
        }
        #expect(indexed == 102)
        func export(_ catalog: String) async throws -> String { try await CLI.run(["catalog", "export", "--catalog", catalog]).stdout }
        #expect(try await export(whole) == export(sharded))
        let query = ["similar", "chelsea_cat", "--facets", "*", "--limit", "20", "--json"]
        let a = try await CLI.run(query + ["--catalog", whole]).stdout, b = try await CLI.run(query + ["--catalog", sharded]).stdout
        func withoutRequestID(_ text: String) -> String { text.split(separator: "\n").filter { !$0.contains("\"reqid\"") }.joined(separator: "\n") }
        #expect(withoutRequestID(a) == withoutRequestID(b))
    }
}
