import Foundation
import Logging

/// A swift-log handler writing one JSON object per line to standard error:
/// `{"ts":"…","level":"info","label":"vsearch.serve","message":"request","request_id":"…","status":200,…}`.
///
/// Only what callers put in metadata is written; the server never puts
/// query strings, bodies or headers there, so keys and secrets stay out of logs.
public struct JSONLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    let label: String

    public init(label: String) { self.label = label }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var object: [String: Any] = [
            "ts": ISO8601DateFormatter().string(from: Date()), "level": event.level.rawValue,
            "label": label, "message": event.message.description,
        ]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) {
            object[key] = JSONLogHandler.plain(value)
        }
        guard var data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        data.append(0x0A)
        FileHandle.standardError.write(data)
    }

    static func plain(_ value: Logger.Metadata.Value) -> Any {
        switch value {
        case .string(let text): text
        case .stringConvertible(let value):
            switch value {
            case let number as Int: number
            case let number as Double: number
            case let flag as Bool: flag
            default: value.description
            }
        case .array(let values): values.map(plain)
        case .dictionary(let values): values.mapValues(plain)
        }
    }
}
