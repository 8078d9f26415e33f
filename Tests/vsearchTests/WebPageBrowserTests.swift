import Foundation
import TestSupport
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

    @Test("upload, detected objects (boxes, click, every product, detection off), box, facets, detail, paging, sharing, colour, similarity switch, click tracking, analytics, keyboard, phone width, hostile catalog, keys")
    func page() async throws {
        let missing = BrowserSetup.missing
        guard missing.isEmpty else {
            Issue.record("the browser tests cannot run: missing \(missing.joined(separator: ", ")); install with \(BrowserSetup.installCommand)")
            return
        }
        try FileManager.default.createDirectory(atPath: Self.output, withIntermediateDirectories: true)
        let resultPath = Self.output + "/result.json", logPath = Self.output + "/runner.log"
        try? FileManager.default.removeItem(atPath: resultPath)
        let arguments = [Self.runner, "--vsearch", CLI.binary, "--corpus", CLI.repository + "/corpus",
                         "--screenshots", Self.output, "--json", resultPath]
        // Awaited without holding a thread; past the deadline the runner gets SIGTERM (it stops its servers and the browser on the way out).
        let deadline = Self.deadline
        let (watchdog, outcome) = try await ChildProcess.withRunning(BrowserSetup.python, arguments, environment: ["PYTHONUNBUFFERED": "1"]) { runner in
            Task {
                guard (try? await Task.sleep(for: .seconds(deadline))) != nil, !runner.hasEnded else { return false }
                runner.signal(SIGTERM)
                return true
            }
        }
        watchdog.cancel()
        let logText = outcome.stdout + outcome.stderr
        try? logText.write(toFile: logPath, atomically: true, encoding: .utf8)
        if await watchdog.value { Issue.record("the browser tests did not finish in \(Int(deadline)) s; log: \(logPath)") }
        guard let data = FileManager.default.contents(atPath: resultPath),
              let result = try? JSONDecoder().decode(RunnerResult.self, from: data) else {
            Issue.record("the browser test runner wrote no result (exit \(outcome.status)); its output:\n\(logText.suffix(3000))")
            return
        }
        #expect(!result.steps.isEmpty, "the runner ran no step")
        for step in result.steps {
            let picture = step.screenshot.map { " — screenshot \(Self.output)/\($0)" } ?? ""
            #expect(step.passed, "browser step \(step.name): \(step.message)\(picture)")
        }
        #expect(outcome.status == 0 || !result.passed,
                "the runner exited \(outcome.status) although every step passed:\n\(logText.suffix(2000))")
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
        } else if !hasSelenium {
            missing.append("selenium in \(python)")
        }
        return missing
    }

    /// Whether the venv holds the selenium package (its folder in site-packages: no interpreter started).
    static var hasSelenium: Bool {
        let lib = CLITests.repository + "/.build-tools/venv/lib"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: lib)) ?? []
        return versions.contains { FileManager.default.fileExists(atPath: lib + "/" + $0 + "/site-packages/selenium/__init__.py") }
    }
}
