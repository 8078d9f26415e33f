import Foundation

/// Parses the three HTTP-date forms of RFC 9110 §5.6.7 without a
/// `DateFormatter` (no locale, no ICU): pure, and the same on every platform.
enum HTTPDate {
    static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// The instant `text` names, or nil when it is none of the forms.
    /// - Parameter now: decides the century of an RFC 850 two-digit year (never more than 50 years ahead).
    static func parse(_ text: String, now: Date) -> Date? {
        let tokens = text.split(separator: " ", omittingEmptySubsequences: true)
        guard let first = tokens.first, first.allSatisfy({ $0.isLetter || $0 == "," }) else { return nil }
        if first.hasSuffix(",") {
            switch tokens.count {
            case 6:  // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
                return make(day: tokens[1], month: tokens[2], year: tokens[3], time: tokens[4], zone: tokens[5], now: now)
            case 4:  // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT
                let parts = tokens[1].split(separator: "-", omittingEmptySubsequences: false)
                guard parts.count == 3 else { return nil }
                return make(day: parts[0], month: parts[1], year: parts[2], time: tokens[2], zone: tokens[3], now: now)
            default: return nil
            }
        }
        // asctime: Sun Nov  6 08:49:37 1994
        guard tokens.count == 5 else { return nil }
        return make(day: tokens[2], month: tokens[1], year: tokens[4], time: tokens[3], zone: "GMT", now: now)
    }

    static func make(day: Substring, month: Substring, year: Substring, time: Substring, zone: Substring?, now: Date) -> Date? {
        guard let zone, ["GMT", "UTC"].contains(zone.uppercased()),
              let day = digits(day, count: 1...2), (1...31).contains(day),
              let monthIndex = months.firstIndex(of: month.lowercased()),
              var year = digits(year, count: 2...4) else { return nil }
        let clock = time.split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 3, let hour = digits(clock[0], count: 2...2), let minute = digits(clock[1], count: 2...2),
              let second = digits(clock[2], count: 2...2), hour < 24, minute < 60, second <= 60 else { return nil }
        if year < 100 {
            // RFC 9110: a two-digit year more than 50 years ahead means the previous century.
            let current = Int(now.timeIntervalSince1970 / 86_400 / 365.2425) + 1970
            year += current / 100 * 100
            if year > current + 50 { year -= 100 }
        }
        let days = daysFromCivil(year: year, month: monthIndex + 1, day: day)
        return Date(timeIntervalSince1970: Double(days * 86_400 + hour * 3_600 + minute * 60 + second))
    }

    /// A run of `count` ASCII digits as a number.
    static func digits(_ text: Substring, count: ClosedRange<Int>) -> Int? {
        guard count.contains(text.count), text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(text)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
