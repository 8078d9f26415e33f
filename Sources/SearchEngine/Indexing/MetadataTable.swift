import Foundation
import VisualSearch

/// Catalog metadata read from a CSV file (header row; RFC 4180 quoting) or a
/// JSON-lines file (one object per line). Rows are keyed by `im_name`.
///
/// ```swift
/// let table = try MetadataTable(contentsOf: "corpus/catalog.csv")
/// table.rows["chelsea_cat"]?["brand"] // "scikit-image"
/// ```
public struct MetadataTable: Sendable {
    /// Column names in file order (without `im_name`).
    public var columns: [String]
    /// `im_name` → column → value text.
    public var rows: [String: [String: String]]
    /// `im_name`s in file order.
    public var order: [String]

    /// Reads a `.csv`, `.jsonl` or `.ndjson` file.
    /// - Throws: ``VisualSearchError/invalidMetadata(row:field:reason:)`` or ``VisualSearchError/invalidParameter(name:reason:)``.
    public init(contentsOf path: String) throws(VisualSearchError) {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw .invalidParameter(name: "metadata", reason: "cannot read \(path) as UTF-8 text")
        }
        let lower = path.lowercased()
        if lower.hasSuffix(".jsonl") || lower.hasSuffix(".ndjson") || lower.hasSuffix(".json") {
            try self.init(jsonLines: text)
        } else {
            try self.init(csv: text)
        }
    }

    /// Parses CSV text whose header has an `im_name` column.
    public init(csv text: String) throws(VisualSearchError) {
        let records = MetadataTable.parseCSV(text)
        guard let header = records.first else { throw .invalidParameter(name: "metadata", reason: "the CSV file is empty") }
        guard let nameColumn = header.firstIndex(of: "im_name") else {
            throw .invalidParameter(name: "metadata", reason: "the CSV header has no im_name column")
        }
        columns = header.filter { $0 != "im_name" }
        rows = [:]
        order = []
        for (number, record) in records.dropFirst().enumerated() where !(record.count == 1 && record[0].isEmpty) {
            guard record.count == header.count else {
                throw .invalidMetadata(row: number + 2, field: "*", reason: "\(record.count) values for \(header.count) columns")
            }
            let name = record[nameColumn]
            guard !name.isEmpty else { throw .invalidMetadata(row: number + 2, field: "im_name", reason: "empty") }
            var values: [String: String] = [:]
            for (column, value) in zip(header, record) where column != "im_name" { values[column] = value }
            if rows[name] == nil { order.append(name) }
            rows[name] = values
        }
    }

    /// Parses JSON lines: objects with an `im_name` key; other values become text.
    public init(jsonLines text: String) throws(VisualSearchError) {
        var columns: [String] = []
        var seen = Set<String>()
        rows = [:]
        order = []
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty { continue }
            guard let object = (try? JSONSerialization.jsonObject(with: Data(trimmed.utf8))) as? [String: Any] else {
                throw .invalidMetadata(row: number + 1, field: "*", reason: "not a JSON object")
            }
            guard let name = object["im_name"].flatMap(MetadataTable.text), !name.isEmpty else {
                throw .invalidMetadata(row: number + 1, field: "im_name", reason: "missing")
            }
            var values: [String: String] = [:]
            for (key, value) in object where key != "im_name" {
                values[key] = MetadataTable.text(value) ?? ""
                if seen.insert(key).inserted { columns.append(key) }
            }
            if rows[name] == nil { order.append(name) }
            rows[name] = values
        }
        self.columns = columns
    }

    static func text(_ value: Any) -> String? {
        switch value {
        case let string as String: return string
        case let number as NSNumber:
            // JSON booleans arrive as NSNumber with the C type "c" (char).
            let type = String(cString: number.objCType)
            if type == "c" { return number.boolValue ? "true" : "false" }
            // A JSON number with a fraction or exponent keeps one (3.0 stays "3.0", not "3"), so its field is inferred float again.
            if type == "d" || type == "f" { return number.doubleValue.description }
            return number.stringValue
        case is NSNull: return nil
        default:
            guard let data = try? JSONSerialization.data(withJSONObject: value) else { return nil }
            return String(data: data, encoding: .utf8)
        }
    }

    /// RFC 4180 CSV: quoted fields with doubled quotes, commas and newlines inside quotes, CRLF or LF.
    static func parseCSV(_ text: String) -> [[String]] {
        var records: [[String]] = []
        var record: [String] = []
        var field = ""
        var inQuotes = false
        var iterator = text.unicodeScalars.makeIterator()
        var pending: Unicode.Scalar? = iterator.next()
        while let scalar = pending {
            pending = iterator.next()
            if inQuotes {
                if scalar == "\"" {
                    if pending == "\"" { field.unicodeScalars.append("\""); pending = iterator.next() } else { inQuotes = false }
                } else {
                    field.unicodeScalars.append(scalar)
                }
            } else {
                switch scalar {
                case "\"": inQuotes = true
                case ",": record.append(field); field = ""
                case "\r": break
                case "\n": record.append(field); records.append(record); record = []; field = ""
                default: field.unicodeScalars.append(scalar)
                }
            }
        }
        if !field.isEmpty || !record.isEmpty { record.append(field); records.append(record) }
        return records
    }

    /// Refuses metadata that does not fit the schema, before a store writes anything.
    /// - Throws: ``VisualSearchError/invalidMetadata(row:field:reason:)``; `row` counts the entries from 1.
    public static func check(_ entries: [(imageName: String, metadata: [String: String])], schema: FieldSchema) throws(VisualSearchError) {
        for (offset, entry) in entries.enumerated() {
            if let scalar = CatalogText.forbiddenInName(entry.imageName) {
                throw .invalidMetadata(row: offset + 1, field: "im_name", reason: CatalogText.reason(entry.imageName, scalar))
            }
            if let problem = validate(entry.metadata, schema: schema) {
                throw .invalidMetadata(row: offset + 1, field: problem.field, reason: "\(entry.imageName): \(problem.reason)")
            }
        }
    }

    /// Checks one row against a schema: int and float values must parse;
    /// names and values hold no control characters (``CatalogText``).
    public static func validate(_ values: [String: String], schema: FieldSchema) -> (field: String, reason: String)? {
        for (field, value) in values.sorted(by: { $0.key < $1.key }) {
            if let scalar = CatalogText.forbiddenInName(field) { return (CatalogText.visible(field.prefix(80)), CatalogText.reason(field, scalar)) }
            if let scalar = CatalogText.forbiddenInValue(value) { return (field, CatalogText.reason(value, scalar)) }
            guard !value.isEmpty else { continue }
            switch schema.fields[field] {
            case .int?: if Int(value) == nil { return (field, "\"\(value)\" is not an integer") }
            case .float?:
                if !(Double(value).map { $0.isFinite } ?? false) { return (field, "\"\(value)\" is not a number") }
            default: break
            }
        }
        return nil
    }
}
