import Foundation
import TestSupport
import Testing
@testable import VisualSearchServer

/// A live server's `/metrics` read by the official Python client's parser
/// (`prometheus_client.parser.text_string_to_metric_families`, PyPI
/// `prometheus-client`, pinned by sha256 in scripts/browser.sh): it must parse
/// without an error and find what the Swift reading finds — every family with
/// its help, its type and its samples.
///
/// Needs prometheus-client in `.build-tools/venv` (`scripts/install-deps.sh`
/// installs it). Without it the suite is skipped — except in CI (`CI=true`),
/// where it fails naming the command.
@Suite("/metrics read by prometheus_client's parser", .timeLimit(.minutes(10)),
       .enabled(if: PrometheusParser.runs, "needs prometheus-client in .build-tools/venv: run scripts/install-deps.sh"))
struct PrometheusParserTests {
    @Test("a live server's /metrics parses, every family with help, the same families, types and samples as the Swift reading")
    func liveServer() async throws {
        guard PrometheusParser.isInstalled else {
            Issue.record("prometheus_client is not installed in \(PrometheusParser.python); install it with \(PrometheusParser.installCommand)")
            return
        }
        let text = try await ServerFixture.with { running in
            _ = try await ServerFixture.reply(running.url.appending(path: "search").appending(queryItems: [URLQueryItem(name: "im_name", value: "chelsea_cat")]))
            _ = try await ServerFixture.reply(running.url.appending(path: "search").appending(queryItems: [URLQueryItem(name: "im_name", value: "no such image")]))
            return try await ServerFixture.reply(running.url.appending(path: "metrics")).text
        }
        let parsed = try await PrometheusParser.parse(text)
        let exposition = Exposition(text)
        #expect(exposition.problems == [])
        #expect(parsed.count == exposition.families.count, "\(parsed.map(\.name)) vs \(exposition.families.map(\.name))")
        for family in exposition.families {
            // The parser names a counter's family without `_total` (OpenMetrics' way); its samples keep the full name.
            let parsedName = family.type == "counter" ? String(family.name.dropLast("_total".count)) : family.name
            guard let read = parsed.first(where: { $0.name == parsedName }) else {
                Issue.record("the parser did not find \(family.name) (as \(parsedName))")
                continue
            }
            #expect(!read.help.isEmpty, "\(family.name): the parser found no help")
            #expect(read.help == family.help, "\(family.name)")
            #expect(read.type == family.type, "\(family.name)")
            #expect(read.samples.count == family.samples.count, "\(family.name)")
            for (python, swift) in zip(read.samples, family.samples) {
                #expect(python.name == swift.name && python.labels == swift.labels, "\(python) vs \(swift)")
                #expect(Double(python.value) == swift.value, "\(python) vs \(swift)")
            }
        }
        for family in MetricFamily.process {
            #expect(parsed.contains { $0.name == (family.kind == .counter ? String(family.name.dropLast("_total".count)) : family.name) },
                    "the parser found no \(family.name)")
        }
    }
}

/// Whether the parser test can run here, and running it.
enum PrometheusParser {
    static let python = Repository.root + "/.build-tools/venv/bin/python"
    static let installCommand = "scripts/install-deps.sh (prometheus-client into .build-tools/venv by scripts/browser.sh)"

    /// In CI the parser test always runs, and fails when the parser is missing.
    static var runs: Bool { ProcessInfo.processInfo.environment["CI"] == "true" || isInstalled }

    /// Whether the venv holds prometheus_client's parser (its file in site-packages: no interpreter started).
    static var isInstalled: Bool {
        let lib = Repository.root + "/.build-tools/venv/lib"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: lib)) ?? []
        return FileManager.default.isExecutableFile(atPath: python)
            && versions.contains { FileManager.default.fileExists(atPath: lib + "/" + $0 + "/site-packages/prometheus_client/parser.py") }
    }

    /// A family as the parser read it.
    struct Family: Decodable {
        struct Sample: Decodable, CustomStringConvertible {
            var name: String
            var labels: [String: String]
            /// Python's `repr` of the float.
            var value: String
            var description: String { "\(name)\(labels) \(value)" }
        }
        var name: String
        var type: String
        var help: String
        var samples: [Sample]
    }

    /// Reads a file with `text_string_to_metric_families` and prints the families as JSON; a parse error is a traceback and exit 1.
    static let script = """
        import json, sys
        from prometheus_client.parser import text_string_to_metric_families
        with open(sys.argv[1], encoding="utf-8") as f:
            text = f.read()
        families = [{"name": f.name, "type": f.type, "help": f.documentation,
                     "samples": [{"name": s.name, "labels": s.labels, "value": repr(s.value)} for s in f.samples]}
                    for f in text_string_to_metric_families(text)]
        print(json.dumps(families))
        """

    static func parse(_ text: String) async throws -> [Family] {
        let path = Repository.temporaryDirectory("metrics") + "/metrics.txt"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let outcome = try await ChildProcess.run(python, ["-c", script, path])
        guard outcome.status == 0 else {
            struct ParseFailed: Error, CustomStringConvertible { var description: String }
            throw ParseFailed(description: "prometheus_client's parser failed (exit \(outcome.status)) on \(path):\n\(outcome.stderr)")
        }
        return try JSONDecoder().decode([Family].self, from: Data(outcome.stdout.utf8))
    }
}
