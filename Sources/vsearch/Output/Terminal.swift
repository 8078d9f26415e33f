import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Writing to the terminal: stdout for results, stderr for progress and errors.
/// Whatever is written passes ``TerminalText/escaped(_:keepingLineBreaks:)``
/// (line breaks kept): no text vsearch prints can carry a control character or
/// a bidi override to the terminal; values are escaped one by one where they
/// are laid out (tables, lists), so a line break inside one shows as `\n`.
enum Terminal {
    /// Whether stderr is an interactive terminal (progress bars only then).
    static let stderrIsTTY = isatty(STDERR_FILENO) != 0

    /// Writes a line to stdout.
    static func out(_ text: String) {
        write(Array((TerminalText.escaped(text, keepingLineBreaks: true) + "\n").utf8), to: STDOUT_FILENO)
    }

    /// Writes bytes to stdout as they are (`prepare … -`).
    static func outBytes(_ bytes: [UInt8]) {
        write(bytes, to: STDOUT_FILENO)
    }

    /// Writes text to stderr (no newline added), a library setting named as its flag (``SettingFlags``).
    static func err(_ text: String) {
        write(Array(SettingFlags.rename(TerminalText.escaped(text, keepingLineBreaks: true)).utf8), to: STDERR_FILENO)
    }

    /// Writes text to stderr over the current line (a progress bar's redraw):
    /// the one control sequence vsearch itself sends, CR and "erase line", then `text` as ``err(_:)`` writes it.
    static func errOverLine(_ text: String) {
        write(Array("\r\u{1B}[2K".utf8), to: STDERR_FILENO)
        err(text)
    }

    /// Writes every byte, retrying short writes and EINTR. When the reader has
    /// gone (EPIPE: `vsearch … | head -1`) the process ends the conventional
    /// way, killed by SIGPIPE (status 141 in a shell), quietly and whatever
    /// the catalog store: some libraries (SwiftNIO, used for PostgreSQL) set
    /// SIGPIPE to be ignored, which turns the signal into this error. Other
    /// write errors are dropped: there is nowhere left to report them.
    private static func write(_ bytes: [UInt8], to descriptor: Int32) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer in
                Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            }
            if written > 0 { offset += written; continue }
            if written < 0 && errno == EINTR { continue }
            if written < 0 && errno == EPIPE { endForClosedPipe() }
            return
        }
    }

    /// Ends the process as a default SIGPIPE would.
    static func endForClosedPipe() -> Never {
        signal(SIGPIPE, SIG_DFL)
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGPIPE)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
        raise(SIGPIPE)
        _exit(128 + SIGPIPE)
    }

    /// Writes a value as pretty, key-sorted JSON to stdout.
    static func json(_ value: some Encodable) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        if let data = try? encoder.encode(value), let text = String(data: data, encoding: .utf8) {
            out(text)
        }
    }

    /// Writes a value as one line of compact, key-sorted JSON to stdout (JSON lines).
    static func jsonLine(_ value: some Encodable) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        if let data = try? encoder.encode(value), let text = String(data: data, encoding: .utf8) {
            out(text)
        }
    }

    /// `1 image`, `2 images`, `1,234 images`: a count and its noun, plural unless the count is 1.
    static func count(_ value: Int, _ noun: String, plural: String? = nil) -> String {
        "\(grouped(value)) \(value == 1 ? noun : plural ?? noun + "s")"
    }

    /// `1,234,567`.
    static func grouped(_ value: Int) -> String {
        let digits = String(value)
        var out = ""
        for (index, character) in digits.reversed().enumerated() {
            if index > 0 && index % 3 == 0 && character != "-" { out.append(",") }
            out.append(character)
        }
        return String(out.reversed())
    }
}
