import Foundation

/// The type of a catalog metadata field, as in a ViSearch schema.
///
/// - `string`: exact-match filters, facets with value counts.
/// - `text`: full-text filters (SQLite FTS5), facets with value counts.
/// - `int`, `float`: exact value or `min,max` range filters, facets with min and max.
public enum FieldType: String, Sendable, Hashable, Codable, CaseIterable {
    case string, text, int, float

    /// Whether values are numbers.
    public var isNumeric: Bool { self == .int || self == .float }
}

/// The declared fields of a catalog: name → type.
///
/// ```swift
/// let schema = try FieldSchema(parsing: "brand:string,description:text,price:float,count:int")
/// ```
public struct FieldSchema: Sendable, Hashable, Codable {
    /// The fields by name.
    public var fields: [String: FieldType]

    /// Creates a schema.
    public init(fields: [String: FieldType] = [:]) { self.fields = fields }

    /// Parses `name:type,name:type`.
    /// - Throws: ``VisualSearchError/invalidParameter(name:reason:)``.
    public init(parsing text: String) throws(VisualSearchError) {
        var fields: [String: FieldType] = [:]
        for part in text.split(separator: ",") where !part.trimmingCharacters(in: .whitespaces).isEmpty {
            let pieces = part.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pieces.count == 2, let type = FieldType(rawValue: pieces[1].lowercased()) else {
                throw .invalidParameter(name: "schema", reason: "\"\(part)\" is not name:type with type string, text, int or float")
            }
            try FieldSchema.validate(name: pieces[0])
            fields[pieces[0]] = type
        }
        self.fields = fields
    }

    /// Field names: a letter or underscore, then letters, digits, underscores
    /// or dashes; at most 64 characters. `im_name` is reserved.
    public static func validate(name: String) throws(VisualSearchError) {
        let valid = !name.isEmpty && name.count <= 64
            && (name.first.map { $0.isLetter || $0 == "_" } ?? false)
            && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }
        guard valid, name != "im_name" else {
            throw .invalidParameter(name: "field name", reason: "\"\(name)\" must start with a letter and use only letters, digits, _ or - (im_name is reserved)")
        }
    }

    /// Infers types from sample values: integers → int, numbers → float,
    /// long or multi-word values (average over 40 characters or 5 words) →
    /// text, otherwise string. Empty values are ignored. A column of numbers
    /// with a few values that are not (at most 10 %, among 10 or more
    /// values: `price=notanumber` in one row) is still numeric: its type comes
    /// from the values that fit it, and the rows that do not are refused one
    /// by one, naming field and value, instead of one typo turning the field
    /// into text for every image (where `fq price:10,300` would match nothing).
    public static func infer(columns: [String], rows: [[String: String]]) -> FieldSchema {
        var fields: [String: FieldType] = [:]
        for column in columns where column != "im_name" && (try? validate(name: column)) != nil {
            let values = rows.compactMap { $0[column] }.filter { !$0.isEmpty }
            if values.isEmpty { fields[column] = .string; continue }
            let numbers = values.filter { Double($0).map { $0.isFinite } ?? false }
            let mostlyNumbers = numbers.count == values.count || (values.count >= 10 && numbers.count * 10 >= values.count * 9)
            if mostlyNumbers && numbers.allSatisfy({ Int($0) != nil }) {
                fields[column] = .int
            } else if mostlyNumbers {
                fields[column] = .float
            } else {
                let averageLength = Double(values.reduce(0) { $0 + $1.count }) / Double(values.count)
                let averageWords = Double(values.reduce(0) { $0 + $1.split(separator: " ").count }) / Double(values.count)
                fields[column] = averageLength > 40 || averageWords > 5 ? .text : .string
            }
        }
        return FieldSchema(fields: fields)
    }
}
