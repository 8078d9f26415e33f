import Foundation

/// How far back statistics look, as people write it: `30m`, `24h`, `7d`, a
/// date (`2026-11-01`, UTC midnight) or an ISO 8601 time. One reading for
/// `vsearch events stats --since` and the server's `/v3/stats?since=`.
///
/// ```swift
/// StatsWindow.start("24h", now: Date())        // a day ago
/// StatsWindow.start("2026-11-01", now: Date()) // 2026-11-01T00:00:00Z
/// StatsWindow.start("soon", now: Date())       // nil
/// ```
public enum StatsWindow {
    /// What the accepted forms are, for messages.
    public static let forms = "30m, 24h, 7d, 2026-11-01 or an ISO 8601 time"

    /// The start of the window `text` names, or nil when it is none of ``forms``.
    public static func start(_ text: String, now: Date) -> Date? {
        if let unit = text.last, let amount = Double(text.dropLast()), amount >= 0, amount.isFinite {
            let seconds: [Character: Double] = ["m": 60, "h": 3600, "d": 86400]
            if let scale = seconds[unit] { return now.addingTimeInterval(-amount * scale) }
        }
        if let date = ISO8601DateFormatter().date(from: text) { return date }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter.date(from: text)
    }
}
