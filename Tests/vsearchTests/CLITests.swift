import Foundation
import ImageOps
import TestSupport
import Testing

/// Runs the built `vsearch` binary and checks stdout, stderr, exit codes and files.
@Suite("vsearch command line", .serialized)
struct CLITests {
    struct Run {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// The `vsearch` executable built next to the test bundle.
    static let binary: String = {
        let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = testBinary.deletingLastPathComponent()
        // The test runner lives in …/debug/vsearchPackageTests.xctest (a file on Linux).
        while !FileManager.default.isExecutableFile(atPath: directory.appendingPathComponent("vsearch").path),
              directory.path != "/" {
            directory = directory.deletingLastPathComponent()
        }
        return directory.appendingPathComponent("vsearch").path
    }()

    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// Runs the binary to its end (``ChildProcess``: awaited, both pipes drained at once).
    static func run(_ arguments: [String], environment: [String: String] = [:], directory: String? = nil) async throws -> Run {
        let outcome = try await ChildProcess.run(binary, arguments, environment: environment, directory: directory)
        return Run(status: outcome.status, stdout: outcome.stdout, stderr: outcome.stderr)
    }

    /// Runs the binary with a stdout nobody reads (`vsearch … | head -0`): its first write to stdout meets EPIPE.
    static func runIntoClosedPipe(_ arguments: [String]) async throws -> ChildProcess.Outcome {
        try await ChildProcess.runIntoClosedPipe(binary, arguments)
    }

    /// Runs the binary while `body` works with it (a server, an interrupted index); see ``ChildProcess/withRunning(_:_:environment:directory:_:)``.
    static func withRunning<Value: Sendable>(_ arguments: [String], environment: [String: String] = [:], directory: String? = nil,
                                             _ body: (ChildProcess.Running) async throws -> Value) async throws -> (Value, ChildProcess.Outcome) {
        try await ChildProcess.withRunning(binary, arguments, environment: environment, directory: directory, body)
    }

    static func temporaryDirectory() -> String { Repository.temporaryDirectory("cli") }

    static func files(under path: String) -> [String] {
        (FileManager.default.enumerator(atPath: path)?.allObjects as? [String] ?? []).sorted()
    }

    /// A folder with two corpus photos, one 1200 px image and one corrupt file.
    static func makeInput() throws -> String {
        let input = temporaryDirectory()
        for name in ["astronaut.jpg", "coffee_cup.jpg"] {
            try FileManager.default.copyItem(atPath: repository + "/corpus/images/" + name, toPath: input + "/" + name)
        }
        let big = PixelBuffer(width: 1200, height: 900, hasAlpha: false, fill: (10, 120, 200, 255))
        try FileManager.default.createDirectory(atPath: input + "/sub", withIntermediateDirectories: true)
        try FileIO.write(try ImageEncoders.JPEG().encode(big), to: input + "/sub/large.jpg")
        try FileManager.default.copyItem(atPath: repository + "/Tests/Fixtures/badinput/truncated/trunc_50pct.jpg",
                                         toPath: input + "/broken.jpg")
        return input
    }

    @Test("--version names the codec libraries")
    func version() async throws {
        let run = try await Self.run(["--version"])
        #expect(run.status == 0)
        #expect(run.stdout.contains("libjpeg-turbo 2.") && run.stdout.contains("libdeflate 1."))
    }

    @Test("thumbs: makes the thumbnails, reports the bad file by name, exits 1, leaves no partial files")
    func thumbsWithFailure() async throws {
        let input = try Self.makeInput(), output = Self.temporaryDirectory() + "/out"
        let run = try await Self.run(["thumbs", input, output, "--jobs", "2"])
        #expect(run.status == 1)
        #expect(run.stderr.contains("broken.jpg") && run.stderr.contains("truncated JPEG"))
        #expect(run.stderr.contains("4 sources: 3 processed, 0 up to date, 1 failed"))
        let files = Self.files(under: output)
        #expect(files.contains("astronaut_thumb_400x400.jpg"))
        #expect(files.contains("sub/large_thumb_400x300.jpg") && files.contains("sub/large_thumb_800x600.jpg"))
        #expect(!files.contains { $0.hasPrefix("broken") || $0.contains(".tmp-") })
        #expect(files.contains("manifest.jsonl"))
    }

    @Test("thumbs: a memory budget that fits one source at a time makes the same files as the default")
    func thumbsMemoryBudget() async throws {
        let input = try Self.makeInput(), tight = Self.temporaryDirectory() + "/tight", roomy = Self.temporaryDirectory() + "/roomy"
        let one = try await Self.run(["thumbs", input, tight, "--jobs", "2", "--memory-budget-mb", "1"])
        let other = try await Self.run(["thumbs", input, roomy, "--jobs", "2"])
        #expect(one.status == 1 && other.status == 1, "the broken file fails in both")
        #expect(one.stderr.contains("4 sources: 3 processed, 0 up to date, 1 failed"), "\(one.stderr)")
        let files = Self.files(under: tight).filter { !$0.hasPrefix("manifest") }
        #expect(files == Self.files(under: roomy).filter { !$0.hasPrefix("manifest") })
        for file in files {
            #expect(FileManager.default.contents(atPath: tight + "/" + file) == FileManager.default.contents(atPath: roomy + "/" + file), "\(file)")
        }
    }

    @Test("thumbs: a re-run skips up-to-date sources; --json reports them")
    func thumbsResume() async throws {
        let input = try Self.makeInput(), output = Self.temporaryDirectory() + "/out"
        _ = try await Self.run(["thumbs", input, output])
        let run = try await Self.run(["thumbs", input, output, "--json"])
        #expect(run.status == 1)
        let summary = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
        #expect(summary?["up_to_date"] as? Int == 3)
        #expect(summary?["thumbnails_written"] as? Int == 0)
        #expect(summary?["failed"] as? Int == 1)
    }

    @Test("thumbs: --fit width, --sizes and --format png are honoured; all good means exit 0")
    func thumbsOptions() async throws {
        let input = Self.temporaryDirectory(), output = Self.temporaryDirectory()
        try FileManager.default.copyItem(atPath: Self.repository + "/corpus/images/grace_hopper.jpg", toPath: input + "/g.jpg")
        let run = try await Self.run(["thumbs", input, output, "--fit", "width", "--sizes", "100,300", "--format", "png"])
        #expect(run.status == 0, "\(run.stderr)")
        let thumbs = Self.files(under: output).filter { $0.hasSuffix(".png") }
        #expect(thumbs.count == 2)
        #expect(thumbs.allSatisfy { $0.hasPrefix("g_thumb_100x") || $0.hasPrefix("g_thumb_300x") })
    }

    @Test("thumbs: invalid options are usage errors (exit 64) with a message")
    func thumbsUsage() async throws {
        let run = try await Self.run(["thumbs", "a", "b", "--sizes", "400,abc"])
        #expect(run.status == 64)
        #expect(run.stderr.contains("--sizes"))
        #expect(try await Self.run(["thumbs", "a", "b", "--quality", "150"]).status == 64)
        let budget = try await Self.run(["thumbs", "a", "b", "--memory-budget-mb", "0"])
        #expect(budget.status == 64 && budget.stderr.contains("--memory-budget-mb"), "\(budget.stderr)")
        let missing = try await Self.run(["thumbs", "/nonexistent/in", Self.temporaryDirectory()])
        #expect(missing.status == 66, "a missing input is EX_NOINPUT, as everywhere")
        #expect(missing.stderr.contains("/nonexistent/in"))
    }

    @Test("prepare: standard preset, box scaled into the upload, JSON report")
    func prepare() async throws {
        let output = Self.temporaryDirectory() + "/upload.jpg"
        let run = try await Self.run(["prepare", Self.repository + "/corpus/images/falcon9_rocket.jpg", output,
                                "--box", "100,50,400,300", "--json"])
        #expect(run.status == 0, "\(run.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
        #expect(report?["width"] as? Int == 512)
        #expect(report?["height"] as? Int == 342)
        #expect(report?["box"] as? String == "80,40,320,240")
        #expect(report?["quality"] as? Double == 0.97)
        let written = try ImageDecoder.decode(fileAt: output)
        #expect(written.pixels.size == PixelSize(width: 512, height: 342))
    }

    @Test("prepare: --high-quality never enlarges; --crop uploads only the box")
    func prepareVariants() async throws {
        let directory = Self.temporaryDirectory()
        let high = try await Self.run(["prepare", Self.repository + "/corpus/images/falcon9_rocket.jpg", directory + "/h.jpg", "--high-quality"])
        #expect(high.status == 0 && high.stdout.contains("640×427"))
        let crop = try await Self.run(["prepare", Self.repository + "/corpus/images/falcon9_rocket.jpg", directory + "/c.jpg",
                                 "--box", "0,0,100,200", "--crop"])
        #expect(crop.status == 0 && crop.stdout.contains("100×200"))
    }

    @Test("prepare: a folder is prepared into a mirrored folder of JPEGs; failures are listed and exit 1")
    func prepareFolder() async throws {
        let input = try Self.makeInput(), output = Self.temporaryDirectory() + "/uploads"
        let run = try await Self.run(["prepare", input, output, "--high-quality", "--json", "--jobs", "2"])
        #expect(run.status == 1)
        let reports = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [[String: Any]] ?? []
        #expect(reports.count == 4)
        #expect(reports.filter { $0["error"] != nil }.count == 1)
        let files = Self.files(under: output)
        #expect(files.contains("astronaut.jpg") && files.contains("coffee_cup.jpg") && files.contains("sub/large.jpg"))
        #expect(!files.contains("broken.jpg"))
        #expect(try ImageDecoder.decode(fileAt: output + "/sub/large.jpg").pixels.size == PixelSize(width: 1024, height: 768))
        #expect(try await Self.run(["prepare", input, output, "--box", "1,1,2,2"]).status == 64)
    }

    @Test("prepare: a bad image exits 65 naming the file and writes nothing")
    func prepareBadInput() async throws {
        let output = Self.temporaryDirectory() + "/never.jpg"
        let path = Self.repository + "/Tests/Fixtures/badinput/wrongformat/html.png"
        let run = try await Self.run(["prepare", path, output])
        #expect(run.status == 65)
        #expect(run.stderr.contains(path) && run.stderr.contains("not an image vsearch reads"))
        #expect(!FileManager.default.fileExists(atPath: output))
        #expect(try await Self.run(["prepare", path, output, "--box", "5,5,1,1"]).status == 64)
    }

    /// 2000×1500 JPEGs: enough work (several seconds) to interrupt mid-run.
    static let largeInputCount = 80
    static func makeLargeInput() throws -> String {
        let input = temporaryDirectory()
        let image = PixelBuffer(width: 2000, height: 1500, hasAlpha: false, fill: (200, 80, 20, 255))
        let jpeg = try ImageEncoders.JPEG().encode(image)
        for index in 0..<Self.largeInputCount { try FileIO.write(jpeg, to: input + "/photo\(index).jpg") }
        return input
    }

    /// After a run completes: no temporary file anywhere, and every thumbnail in the manifest decodes.
    static func expectCompleteOutput(_ output: String, sources: Int) throws {
        let files = files(under: output)
        #expect(!files.contains { $0.contains(".tmp-") }, "temporary files left: \(files.filter { $0.contains(".tmp-") })")
        let manifest = try String(contentsOfFile: output + "/manifest.jsonl", encoding: .utf8).split(separator: "\n")
        #expect(manifest.count == sources)
        for name in files where name.contains("_thumb_") {
            _ = try ImageDecoder.decode(fileAt: output + "/" + name)
        }
        #expect(files.filter { $0.contains("_thumb_") }.count == sources * 4)
    }

    @Test("thumbs: kill -9 mid-run, then a re-run finishes the job and leaves no temporary file")
    func killAndResume() async throws {
        let input = try Self.makeLargeInput(), output = Self.temporaryDirectory()
        // Killed once the first thumbnail is written: mid-run, whatever the machine's speed.
        let (_, killed) = try await Self.withRunning(["thumbs", input, output, "--jobs", "2", "--verbose"]) { thumbs in
            _ = try await thumbs.line { $0.contains("photo") }
            thumbs.signal(SIGKILL)
        }
        #expect(killed.signal == SIGKILL)
        let rerun = try await Self.run(["thumbs", input, output, "--jobs", "2"])
        #expect(rerun.status == 0, "\(rerun.stderr)")
        try Self.expectCompleteOutput(output, sources: Self.largeInputCount)
    }

    @Test("thumbs: SIGINT stops after the images in progress (exit 130), and a re-run continues")
    func interruptAndResume() async throws {
        let input = try Self.makeLargeInput(), output = Self.temporaryDirectory()
        let (_, interrupted) = try await Self.withRunning(["thumbs", input, output, "--jobs", "2", "--verbose"]) { thumbs in
            _ = try await thumbs.line { $0.contains("photo") }
            thumbs.signal(SIGINT)
        }
        #expect(interrupted.status == 130, "\(interrupted.stderr)")
        #expect(!Self.files(under: output).contains { $0.contains(".tmp-") })
        let rerun = try await Self.run(["thumbs", input, output, "--json"])
        #expect(rerun.status == 0)
        let summary = try JSONSerialization.jsonObject(with: Data(rerun.stdout.utf8)) as? [String: Any]
        #expect((summary?["up_to_date"] as? Int ?? 0) > 0, "the interrupted run's work is kept")
        try Self.expectCompleteOutput(output, sources: Self.largeInputCount)
    }

    @Test("info: reports every file and exits 1 when one fails, without dying")
    func info() async throws {
        let bad = Self.repository + "/Tests/Fixtures/badinput/bombs/png_bomb_20000x20000_1bit.png"
        let good = Self.repository + "/Tests/Fixtures/badinput/valid/exif_orientation_6.jpg"
        let run = try await Self.run(["info", good, bad, "--json"])
        #expect(run.status == 1)
        let lines = run.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines[0].contains("\"width\":320") && lines[0].contains("\"orientation\":6"))
        #expect(lines[1].contains("pixel limit"))
    }
}
