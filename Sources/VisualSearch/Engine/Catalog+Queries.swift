import Foundation
import GRDB

/// The SQL side of a query: fq filters, value maps and facets. Field names
/// and values are always bound as parameters; a field is used only after
/// it has been found in the declared schema.
extension Catalog {
    /// The ids of images passing every filter, or `nil` when there are no filters.
    /// - Throws: ``VisualSearchError/unknownField(_:)`` or a malformed numeric value.
    public func matchingIDs(_ filters: [Filter], schema: FieldSchema) throws(VisualSearchError) -> Set<Int64>? {
        guard !filters.isEmpty else { return nil }
        var clauses: [String] = []
        var arguments: [(any DatabaseValueConvertible)?] = []
        for filter in filters {
            guard let type = schema.fields[filter.field] else { throw .unknownField(filter.field) }
            switch type {
            case .string:
                clauses.append("id IN (SELECT image_id FROM image_values WHERE field = ? AND text_value = ?)")
                arguments += [filter.field, filter.value]
            case .text:
                let query = Catalog.fullTextQuery(filter.value)
                guard !query.isEmpty else { throw .invalidParameter(name: "fq", reason: "\(filter.field): no words to search for") }
                clauses.append("id IN (SELECT v.image_id FROM image_text t JOIN image_values v ON v.id = t.rowid WHERE image_text MATCH ? AND t.field = ?)")
                arguments += [query, filter.field]
            case .int, .float:
                switch try filter.numericCondition() {
                case .equals(let value):
                    clauses.append("id IN (SELECT image_id FROM image_values WHERE field = ? AND number_value = ?)")
                    arguments += [filter.field, value]
                case .range(let low, let high):
                    clauses.append("id IN (SELECT image_id FROM image_values WHERE field = ? AND number_value BETWEEN ? AND ?)")
                    arguments += [filter.field, low, high]
                }
            }
        }
        let sql = "SELECT id FROM images WHERE " + clauses.joined(separator: " AND ")
        let bound = StatementArguments(arguments)
        return try read { db in Set(try Int64.fetchAll(db, sql: sql, arguments: bound)) }
    }

    /// A user's words as an FTS5 query: each word quoted (quotes doubled), so
    /// no FTS5 operator or syntax error can come from the input; words are ANDed.
    static func fullTextQuery(_ text: String) -> String {
        text.split(whereSeparator: { $0.isWhitespace || $0.isPunctuation && $0 != "'" && $0 != "-" })
            .map { "\"" + $0.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
            .joined(separator: " ")
    }

    /// Metadata of the given images: all fields, or only `fields`.
    public func valueMaps(for ids: [Int64], fields: [String]?) throws(VisualSearchError) -> [Int64: [String: String]] {
        guard !ids.isEmpty else { return [:] }
        if let fields, fields.isEmpty { return [:] }
        let idList = Catalog.jsonList(ids)
        var sql = "SELECT image_id, field, text_value FROM image_values WHERE image_id IN (SELECT value FROM json_each(?))"
        var arguments: [(any DatabaseValueConvertible)?] = [idList]
        if let fields {
            sql += " AND field IN (SELECT value FROM json_each(?))"
            arguments.append(Catalog.jsonList(fields))
        }
        let bound = StatementArguments(arguments)
        return try read { db in
            var maps: [Int64: [String: String]] = [:]
            for row in try Row.fetchAll(db, sql: sql, arguments: bound) {
                maps[row["image_id"], default: [:]][row["field"]] = row["text_value"]
            }
            return maps
        }
    }

    /// Facets over a set of images (all images when `ids` is nil).
    /// - String and text fields: values with counts, by descending count then value, at most `limit`.
    /// - Numbers: min and max, as integer strings (floats widened to the enclosing integers).
    public func facets(_ fields: [String], schema: FieldSchema, ids: [Int64]?, limit: Int,
                       showCount: Bool) throws(VisualSearchError) -> [Facet] {
        var names: [String] = []
        for field in fields {
            if field == "*" {
                names += schema.fields.keys.sorted()
            } else {
                guard schema.fields[field] != nil else { throw .unknownField(field) }
                names.append(field)
            }
        }
        var seen = Set<String>()
        names = names.filter { seen.insert($0).inserted }
        let scope = ids.map { _ in " AND image_id IN (SELECT value FROM json_each(?))" } ?? ""
        let idList = ids.map(Catalog.jsonList)
        return try read { db in
            try names.compactMap { name -> Facet? in
                guard let type = schema.fields[name] else { return nil }
                var arguments: [(any DatabaseValueConvertible)?] = [name]
                if let idList { arguments.append(idList) }
                if type.isNumeric {
                    let row = try Row.fetchOne(db, sql: "SELECT MIN(number_value) AS low, MAX(number_value) AS high FROM image_values WHERE field = ?" + scope,
                                               arguments: StatementArguments(arguments))
                    guard let low: Double = row?["low"], let high: Double = row?["high"] else { return Facet(key: name, range: nil) }
                    return Facet(key: name, range: Facet.Range(min: String(Int(low.rounded(.down))), max: String(Int(high.rounded(.up)))))
                }
                arguments.append(limit)
                let rows = try Row.fetchAll(db, sql: """
                    SELECT text_value, COUNT(*) AS n FROM image_values WHERE field = ?\(scope)
                    GROUP BY text_value ORDER BY n DESC, text_value LIMIT ?
                    """, arguments: StatementArguments(arguments))
                return Facet(key: name, items: rows.map { Facet.Item(value: $0["text_value"], count: showCount ? $0["n"] : nil) })
            }
        }
    }

    static func jsonList(_ ids: [Int64]) -> String {
        "[" + ids.map(String.init).joined(separator: ",") + "]"
    }

    static func jsonList(_ strings: [String]) -> String {
        let data = (try? JSONEncoder().encode(strings)) ?? Data("[]".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}
