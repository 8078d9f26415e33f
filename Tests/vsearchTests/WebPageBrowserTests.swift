import Foundation
import Testing

/// The web page in a real browser: `Tests/Browser/page_test.py` starts `vsearch serve` on the corpus and drives
/// Debian's headless Chromium through Selenium as a person would (docs/web-page.md is the contract). Each of its
/// steps becomes an expectation here, so a failure names the step; the screenshots of every step are in
/// `test-output/browser/`.
///
/// Needs `chromium`, `chromium-driver` and selenium in `.build-tools/venv` (`scripts/install-deps.sh` installs
/// all three). Without them the suite is skipped — except in CI (`CI=true`), where it fails naming the command.
@Suite("the web page in Chromium", .serialized,
       .enabled(if: BrowserSetup.runs, "needs chromium, chromium-driver and selenium: run scripts/install-deps.sh"))
struct WebPageBrowserTests {
    typealias CLI = CLITests

    static let runner = CLI.repository + "/Tests/Browser/page_test.py"
    static let output = CLI.repository + "/test-output/browser"
    /// The runner gives up on each wait long before this; it only guards against a hung browser.
    static let deadline: TimeInterval = 20 * 60

    /// The runner's result file (`--json`).
    struct RunnerResult: Decodable {
        struct Step: Decodable {
            var name: String
            var passed: Bool
            var message: String
            var screenshot: String?
            var seconds: Double
        }
        var passed: Bool
        var seconds: Double
        var steps: [Step]
    }

    @Test("upload, box, facets, detail, paging, sharing, colour, similarity switch, click tracking, analytics, keyboard, phone width, hostile catalog, keys")
    func page() async throws {
        let missing = BrowserSetup.missing
        guard missing.isEmpty else {
            Issue.record("the browser tests cannot run: missing \(missing.joined(separator: ", ")); install with \(BrowserSetup.installCommand)")
            return
        }
        try FileManager.default.createDirectory(atPath: Self.output, withIntermediateDirectories: true)
        let resultPath = Self.output + "/result.json", logPath = Self.output + "/runner.log"
        try? FileManager.default.removeItem(atPath: resultPath)
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        defer { try? log.close() }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: BrowserSetup.python)
        process.arguments = [Self.runner, "--vsearch", CLI.binary, "--corpus", CLI.repository + "/corpus",
                             "--screenshots", Self.output, "--json", resultPath]
        process.environment = ProcessInfo.processInfo.environment.merging(["PYTHONUNBUFFERED": "1"]) { $1 }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = log
        process.standardError = log
        try CLITests.launch(process)
        let started = Date()
        // Wait without holding a thread: the suites around this one share a cooperative pool of one thread per
        // core, and a blocked one starved their timing tests (seen in CI on 2 cores).
        while process.isRunning && Date().timeIntervalSince(started) < Self.deadline {
            try await Task.sleep(for: .milliseconds(250))
        }
        if process.isRunning {
            process.terminate()  // SIGTERM: the runner stops its servers and the browser on the way out
            Issue.record("the browser tests did not finish in \(Int(Self.deadline)) s; log: \(logPath)")
        }
        await CLI.waitForExit(process)

        let logText = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        guard let data = FileManager.default.contents(atPath: resultPath),
              let result = try? JSONDecoder().decode(RunnerResult.self, from: data) else {
            Issue.record("the browser test runner wrote no result (exit \(process.terminationStatus)); its output:\n\(logText.suffix(3000))")
            return
        }
        #expect(!result.steps.isEmpty, "the runner ran no step")
        for step in result.steps {
            let picture = step.screenshot.map { " — screenshot \(Self.output)/\($0)" } ?? ""
            #expect(step.passed, "browser step \(step.name): \(step.message)\(picture)")
        }
        #expect(process.terminationStatus == 0 || !result.passed,
                "the runner exited \(process.terminationStatus) although every step passed:\n\(logText.suffix(2000))")
        let failed = result.steps.filter { !$0.passed }.count
        print("browser tests: \(result.steps.count - failed) of \(result.steps.count) steps passed in \(result.seconds) s; "
              + "screenshots and runner.log in \(Self.output)")
    }
}

/// Whether the browser tests can run here: Debian's Chromium, its driver, and selenium in the venv.
enum BrowserSetup {
    static let python = CLITests.repository + "/.build-tools/venv/bin/python"
    static let installCommand = "scripts/install-deps.sh (apt-get install chromium chromium-driver; selenium into .build-tools/venv by scripts/browser.sh)"

    /// In CI the browser tests always run, and fail when something is missing.
    static var isRequired: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }
    static var runs: Bool { isRequired || missing.isEmpty }

    /// What the browser tests need and this machine lacks.
    static var missing: [String] {
        var missing: [String] = []
        for (path, name) in [("/usr/bin/chromium", "chromium"), ("/usr/bin/chromedriver", "chromium-driver")]
        where !FileManager.default.isExecutableFile(atPath: path) {
            missing.append("\(name) (\(path))")
        }
        if !FileManager.default.isExecutableFile(atPath: python) {
            missing.append("the venv \(python)")
        } else if (try? exitStatus(python, ["-c", "import selenium"])) != 0 {
            missing.append("selenium in \(python)")
        }
        return missing
    }

    static func exitStatus(_ executable: String, _ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try CLITests.launch(process)
        process.waitUntilExit()
        return process.terminationStatus
    }
}
