import Foundation

/// One `fq` filter: `field:value`. Several filters combine with AND.
///
/// What the value means depends on the field's type in the schema: exact
/// match for `string`, full-text match for `text`, and for `int`/`float`
/// either an exact number or an inclusive range `min,max`.
///
/// ```swift
/// try Filter(parsing: "brand:nike")
/// try Filter(parsing: "price:10,99.5")
/// ```
public struct Filter: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The field name.
    public var field: String
    /// The raw value text.
    public var value: String

    /// Creates a filter.
    public init(field: String, value: String) {
        self.field = field
        self.value = value
    }

    /// Parses `field:value`, the one parser of filter text. On the wire only
    /// `:` separates; the command line also accepts `field=value`.
    /// - Parameters:
    ///   - parameter: names the parameter in errors (`fq`, `filters`).
    ///   - acceptsEquals: whether `=` separates too.
    /// - Throws: ``VisualSearchError/invalidParameter(name:reason:)``.
    public init(parsing text: String, parameter: String = "fq", acceptsEquals: Bool = false) throws(VisualSearchError) {
        guard let separator = text.firstIndex(where: { $0 == ":" || (acceptsEquals && $0 == "=") }) else {
            throw .invalidParameter(name: parameter, reason: "\"\(text)\" is not field:value")
        }
        let field = String(text[..<separator]).trimmingCharacters(in: .whitespaces)
        guard !field.isEmpty else { throw .invalidParameter(name: parameter, reason: "\"\(text)\" has no field name") }
        self.init(field: field, value: String(text[text.index(after: separator)...]))
    }

    /// A numeric condition: an exact value or an inclusive range.
    public enum NumericCondition: Sendable, Hashable {
        case equals(Double)
        case range(Double, Double)
    }

    /// The value as a numeric condition.
    /// - Throws: ``VisualSearchError/invalidParameter(name:reason:)`` when it is neither a number nor `min,max`.
    public func numericCondition() throws(VisualSearchError) -> NumericCondition {
        let parts = value.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        if parts.count == 1, let number = Double(parts[0]), number.isFinite { return .equals(number) }
        if parts.count == 2, let low = Double(parts[0]), let high = Double(parts[1]), low.isFinite, high.isFinite, low <= high {
            return .range(low, high)
        }
        throw .invalidParameter(name: "fq", reason: "\(field): \"\(value)\" is not a number or a range min,max")
    }

    /// `field:value`.
    public var description: String { "\(field):\(value)" }
}
