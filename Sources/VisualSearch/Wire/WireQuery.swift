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
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = WireQuery.unescape(String(parts[0]))
            guard !name.isEmpty else { continue }
            append(name, parts.count > 1 ? WireQuery.unescape(String(parts[1])) : "")
        }
    }

    static func unescape(_ text: String) -> String {
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }

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
