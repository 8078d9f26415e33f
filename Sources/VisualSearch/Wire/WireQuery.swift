import Foundation

/// Parameters as they travel in a URL query string, encoded exactly as the
/// ViSearch Swift SDK does (docs/wire-protocol.md §1.6), so URLs can be compared
/// byte for byte:
///
/// - keys in ascending order (repeated keys keep their relative order);
/// - a list is a **repeated key** (`fl=a&fl=b`), never `fl[]` or a comma join;
/// - percent-encoding starts from `urlQueryAllowed` and also encodes
///   `: # [ ] @ ! $ & ' ( ) * + , ; =`; `?` and `/` stay as they are, and a
///   space becomes `%20`.
///
/// Parsing is lenient, as a server must be: `+` is a space, and both
/// `%2C`-joined and repeated values are kept as given.
///
/// ```swift
/// var query = WireQuery()
/// query.append("fq", "brand:nike")
/// query.append("box", "10,20,200,300")
/// query.encoded // "box=10%2C20%2C200%2C300&fq=brand%3Anike"
/// ```
public struct WireQuery: Sendable, Hashable {
    /// The parameters in insertion order.
    public private(set) var items: [(name: String, value: String)] = []

    /// An empty query.
    public init() {}

    /// Appends one parameter (call again with the same name for a list).
    public mutating func append(_ name: String, _ value: String) {
        items.append((name, value))
    }

    /// Appends every value of a list under the same name.
    public mutating func append(_ name: String, values: [String]) {
        for value in values { append(name, value) }
    }

    /// All values of a parameter, in order.
    public func values(_ name: String) -> [String] {
        items.filter { $0.name == name }.map(\.value)
    }

    /// The first value of a parameter.
    public func first(_ name: String) -> String? {
        items.first { $0.name == name }?.value
    }

    /// The characters left unencoded: `urlQueryAllowed` without `:#[]@!$&'()*+,;=`.
    public static let allowed: CharacterSet = {
        var set = CharacterSet.urlQueryAllowed
        set.remove(charactersIn: ":#[]@!$&'()*+,;=")
        return set
    }()

    /// Percent-encodes one key or value.
    public static func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    /// `key=value&…`, keys sorted, as the Swift SDK sends it.
    public var encoded: String {
        items.enumerated()
            .sorted { $0.element.name != $1.element.name ? $0.element.name < $1.element.name : $0.offset < $1.offset }
            .map { WireQuery.escape($0.element.name) + "=" + WireQuery.escape($0.element.value) }
            .joined(separator: "&")
    }

    /// Parses a query string (or an `application/x-www-form-urlencoded`
    /// body): `&`-separated, `+` as space, percent-decoding that keeps
    /// malformed escapes as they are.
    public init(parsing text: String) {
        for pair in text.utf8.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let equals = pair.firstIndex(of: UInt8(ascii: "="))
            let name = WireQuery.unescape(equals.map { pair[pair.startIndex..<$0] } ?? pair[...])
            guard !name.isEmpty else { continue }
            append(name, equals.map { WireQuery.unescape(pair[pair.index(after: $0)...]) } ?? "")
        }
    }

    /// `+` as space, then percent-decoding; when an escape is malformed or the
    /// decoded bytes are not UTF-8, the text with only `+` replaced (as
    /// Foundation's `removingPercentEncoding` returning nil left it). Byte by
    /// byte, without bridging: a 16 KB query string of 1,200 items costs
    /// microseconds, not milliseconds (issue 37, attack 7).
    static func unescape(_ text: Substring.UTF8View.SubSequence) -> String {
        let plus = UInt8(ascii: "+"), percent = UInt8(ascii: "%"), space = UInt8(ascii: " ")
        guard text.contains(where: { $0 == plus || $0 == percent }) else { return String(decoding: text, as: UTF8.self) }
        var spaced: [UInt8] = [], decoded: [UInt8] = []
        spaced.reserveCapacity(text.count)
        decoded.reserveCapacity(text.count)
        var malformed = false
        var index = text.startIndex
        func hex(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        while index < text.endIndex {
            let byte = text[index]
            let value = byte == plus ? space : byte
            spaced.append(value)
            if byte == percent, !malformed {
                let first = text.index(after: index)
                if first < text.endIndex, text.index(after: first) < text.endIndex,
                   let high = hex(text[first]), let low = hex(text[text.index(after: first)]) {
                    decoded.append(high << 4 | low)
                    spaced.append(text[first])
                    spaced.append(text[text.index(after: first)])
                    index = text.index(first, offsetBy: 2)
                    continue
                }
                malformed = true
            }
            decoded.append(value)
            index = text.index(after: index)
        }
        if !malformed, let text = String(validating: decoded, as: UTF8.self) { return text }
        return String(decoding: spaced, as: UTF8.self)
    }

    /// The same unescaping of a whole string.
    static func unescape(_ text: String) -> String { unescape(text.utf8[...]) }

    public static func == (lhs: WireQuery, rhs: WireQuery) -> Bool {
        lhs.items.map(\.name) == rhs.items.map(\.name) && lhs.items.map(\.value) == rhs.items.map(\.value)
    }

    public func hash(into hasher: inout Hasher) {
        for item in items {
            hasher.combine(item.name)
            hasher.combine(item.value)
        }
    }
}
