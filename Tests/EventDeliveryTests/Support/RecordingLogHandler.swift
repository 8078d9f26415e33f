import Logging
import ConcurrencyToolkit
@testable import EventDelivery
import Tracking

/// A swift-log handler that keeps what it is given, for asserting what a component logged.
struct RecordingLogHandler: LogHandler {
    struct Record: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: Logger.Metadata
    }

    final class Records: Sendable {
        let all = Locked<[Record]>([])
        var list: [Record] { all.withLock { $0 } }
    }

    let records: Records
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let record = Record(level: event.level, message: event.message.description, metadata: metadata.merging(event.metadata ?? [:]) { $1 })
        records.all.withLock { $0.append(record) }
    }

    /// A logger whose records land in `records`.
    static func logger(_ records: Records) -> Logger {
        Logger(label: "test.tracking") { _ in RecordingLogHandler(records: records) }
    }
}
