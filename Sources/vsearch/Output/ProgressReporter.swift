import Foundation

/// Reports progress of a long job on stderr: a redrawn bar on a terminal,
/// one plain line per item otherwise (logs, CI). Failures are always
/// printed on their own line with their reason.
final class ProgressReporter: @unchecked Sendable {
    private let lock = NSLock()
    private let isTTY: Bool
    private let verbose: Bool
    private let quiet: Bool
    private let start = Date()
    private var lastDraw = Date.distantPast
    private var total = 0

    /// - Parameters:
    ///   - verbose: print a line for every item even on a terminal.
    ///   - quiet: print only failures.
    init(isTTY: Bool = Terminal.stderrIsTTY, verbose: Bool = false, quiet: Bool = false) {
        self.isTTY = isTTY
        self.verbose = verbose
        self.quiet = quiet
    }

    /// A line of its own (such as "committed 64"), never drawn over the bar.
    func note(_ line: String) {
        lock.withLock {
            guard !quiet else { return }
            if isTTY { Terminal.errOverLine(line + "\n") } else { Terminal.err(line + "\n") }
            if isTTY { lastDraw = .distantPast }
        }
    }

    func begin(total: Int, noun: String) {
        lock.withLock {
            self.total = total
            if !isTTY && !quiet { Terminal.err("\(total) \(noun) to process\n") }
        }
    }

    /// Records one finished item; `line` is what a log shows for it (nil: nothing of its own, only progress).
    func item(completed: Int, failed: Bool, line: String?) {
        lock.withLock {
            if quiet {
                if failed, let line { Terminal.err(line + "\n") }
            } else if isTTY {
                if failed || verbose, let line { Terminal.errOverLine(line + "\n") }
                let now = Date()
                if completed == total || now.timeIntervalSince(lastDraw) > 0.1 {
                    lastDraw = now
                    Terminal.errOverLine(bar(completed: completed))
                }
            } else if let line {
                Terminal.err(line + "\n")
            }
        }
    }

    /// Ends the bar line.
    func end() {
        lock.withLock { if isTTY && !quiet { Terminal.err("\n") } }
    }

    private func bar(completed: Int) -> String {
        let width = 30
        let fraction = total == 0 ? 1 : Double(completed) / Double(total)
        let filled = Int(fraction * Double(width))
        let elapsed = Date().timeIntervalSince(start)
        let rate = elapsed > 0 ? Double(completed) / elapsed : 0
        let remaining = rate > 0 ? Double(total - completed) / rate : 0
        return "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "] "
            + "\(completed)/\(total)  \(String(format: "%.1f", rate))/s  ETA \(Int(remaining))s"
    }
}
