import Foundation

/// Typed, lenient reading of merged request parameters, as a server must do
/// because the public SDKs disagree (docs/wire-protocol.md §1.5–1.7, §6):
/// booleans `true`/`True`/`1`, lists repeated or comma-joined, numbers with
/// or without `%f`'s trailing zeros. Every malformed value is a
/// ``VisualSearchError/invalidParameter(name:reason:)`` naming the parameter.
extension WireQuery {
    /// Appends every parameter of `other` (query string, then body fields).
    public mutating func merge(_ other: WireQuery) {
        for item in other.items { append(item.name, item.value) }
    }

    /// The last non-empty value of `name` (a body field overrides the query string).
    public func string(_ name: String) -> String? {
        items.last { $0.name == name && !$0.value.isEmpty }?.value
    }

    /// A boolean: `true`/`True`/`TRUE`/`1`/`yes` or `false`/`False`/`0`/`no`.
    public func bool(_ name: String) throws(VisualSearchError) -> Bool? {
        guard let text = string(name) else { return nil }
        switch text.lowercased() {
        case "true", "1", "yes", "on": return true
        case "false", "0", "no", "off": return false
        default: throw .invalidParameter(name: name, reason: "\"\(text)\" is not true or false")
        }
    }

    /// An integer.
    public func int(_ name: String) throws(VisualSearchError) -> Int? {
        guard let text = string(name) else { return nil }
        guard let value = Int(text.trimmingCharacters(in: .whitespaces)) else {
            throw .invalidParameter(name: name, reason: "\"\(text)\" is not an integer")
        }
        return value
    }

    /// A finite float.
    public func float(_ name: String) throws(VisualSearchError) -> Float? {
        guard let text = string(name) else { return nil }
        guard let value = Float(text.trimmingCharacters(in: .whitespaces)), value.isFinite else {
            throw .invalidParameter(name: name, reason: "\"\(text)\" is not a number")
        }
        return value
    }

    /// A list given as repeated keys, comma-joined values, or both
    /// (`facets=a&facets=b`, `facets=a,b`); empty entries dropped.
    public func list(_ name: String) -> [String] {
        values(name).flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// Repeated `key:value` entries, never split on commas (a range `min,max` contains one).
    public func pairs(_ name: String) -> [String] {
        values(name).filter { !$0.isEmpty }
    }
}
