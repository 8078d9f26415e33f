import Foundation
import Logging
import VisualSearch

/// A swift-log handler writing one human-readable line per event to standard
/// error, its metadata in logfmt:
/// `2026-11-25T17:00:00Z info vsearch.serve: request method=GET path="/a b" request_id=… status=200`.
///
/// Every value that is empty or holds a space, `"`, `=`, `\` or a control
/// character is quoted and escaped (``formatted(_:)``), so a value a client
/// chose — a request path — cannot forge other fields or lines:
/// `GET /images/x"status=200"request_id=FORGED` logs as
/// `path="/images/x\"status=200\"request_id=FORGED"`. Keys are sorted.
/// (``JSONLogHandler`` is the machine-readable twin.)
public struct LogfmtLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    let label: String
    let write: @Sendable (String) -> Void

    /// Writes to standard error.
    public init(label: String) {
        self.init(label: label) { line in FileHandle.standardError.write(Data(line.utf8)) }
    }

    /// Writes each line (newline included) to `write`.
    public init(label: String, write: @escaping @Sendable (String) -> Void) {
        self.label = label
        self.write = write
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        write(line(event.message.description, level: event.level, metadata: metadata.merging(event.metadata ?? [:]) { $1 }, at: Date()))
    }

    /// One line: time, level, label, the message (escaped like a value), then `key=value` pairs.
    func line(_ message: String, level: Logger.Level, metadata: Logger.Metadata, at date: Date) -> String {
        var line = ISO8601DateFormatter().string(from: date) + " " + level.rawValue + " " + label + ": " + Self.escapedMessage(message)
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            line += " " + Self.formatted(key) + "=" + Self.formatted(Self.text(value))
        }
        return line + "\n"
    }

    /// A value as logfmt writes it: bare when it is safe, else in quotes with `\"`, `\\`, `\n`, `\r`, `\t` and `\u{…}` escapes.
    public static func formatted(_ value: String) -> String {
        let needsQuotes = value.isEmpty || value.unicodeScalars.contains { scalar in
            scalar == " " || scalar == "\"" || scalar == "=" || scalar == "\\" || CatalogText.isControl(scalar)
        }
        return needsQuotes ? "\"" + escaped(value) + "\"" : value
    }

    /// The message: free text, but never a line break or another control character.
    static func escapedMessage(_ message: String) -> String {
        message.unicodeScalars.contains(where: CatalogText.isControl) ? CatalogText.escaped(message[...], quoting: false) : message
    }

    static func escaped(_ value: String) -> String {
        CatalogText.escaped(value[...], quoting: true)
    }

    static func text(_ value: Logger.Metadata.Value) -> String {
        switch value {
        case .string(let text): text
        case .stringConvertible(let value): value.description
        case .array(let values): "[" + values.map(text).joined(separator: ",") + "]"
        case .dictionary(let values): "{" + values.sorted { $0.key < $1.key }.map { "\($0.key):\(text($0.value))" }.joined(separator: ",") + "}"
        }
    }
}
