import Foundation

/// Writing to the terminal: stdout for results, stderr for progress and errors.
enum Terminal {
    /// Whether stderr is an interactive terminal (progress bars only then).
    static let stderrIsTTY = isatty(STDERR_FILENO) != 0

    /// Writes a line to stdout.
    static func out(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    /// Writes text to stderr (no newline added).
    static func err(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
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
