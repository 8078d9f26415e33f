import Foundation
import GRDB
import SearchEngine
import VisualSearch

/// The SQL side of a query: fq filters, value maps and facets. Field names
/// and values are always bound as parameters; a field is used only after
/// it has been found in the declared schema.
extension SQLiteCatalogStore {
    /// The ids of images passing every filter, or `nil` when there are no filters.
    /// - Throws: ``CatalogStoreError/unknownField(_:known:)`` or a malformed numeric value.
    public func matchingIDs(_ filters: [Filter], schema: FieldSchema) async throws(CatalogStoreError) -> Set<Int64>? {
        guard !filters.isEmpty else { return nil }
        var clauses: [String] = []
        var arguments: [(any DatabaseValueConvertible)?] = []
        for filter in filters {
            guard let type = schema.fields[filter.field] else { throw .unknownField(filter.field, known: schema.fields.keys.sorted()) }
            switch type {
            case .string:
                clauses.append("id IN (SELECT image_id FROM image_values WHERE field = ? AND text_value = ?)")
                arguments += [filter.field, filter.value]
            case .text:
                let query = SQLiteCatalogStore.fullTextQuery(filter.value)
                guard !query.isEmpty else { throw .invalidValue(name: "fq", reason: "\(filter.field): no words to search for") }
                clauses.append("id IN (SELECT v.image_id FROM image_text t JOIN image_values v ON v.id = t.rowid WHERE image_text MATCH ? AND t.field = ?)")
                arguments += [query, filter.field]
            case .int, .float:
                switch try checkingInput({ () throws(VisualSearchError) in try filter.numericCondition() }) {
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
        return try await read { db in Set(try Int64.fetchAll(db, sql: sql, arguments: bound)) }
    }

    /// A user's words as an FTS5 query: each word quoted (quotes doubled), so
    /// no FTS5 operator or syntax error can come from the input; words are ANDed.
    /// Control characters separate words too: FTS5 reads a NUL as the end of
    /// the query, which would leave a quote open (a syntax error).
    static func fullTextQuery(_ text: String) -> String {
        text.split(whereSeparator: { character in
            character.isWhitespace || character.isPunctuation && character != "'" && character != "-"
                || character.unicodeScalars.contains { $0.properties.generalCategory == .control }
        })
            .map { "\"" + $0.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
            .joined(separator: " ")
    }

    /// Metadata of the given images: all fields, or only `fields`.
    public func valueMaps(for ids: [Int64], fields: [String]?) async throws(CatalogStoreError) -> [Int64: [String: String]] {
        guard !ids.isEmpty else { return [:] }
        if let fields, fields.isEmpty { return [:] }
        let idList = SQLiteCatalogStore.jsonList(ids)
        var sql = "SELECT image_id, field, text_value FROM image_values WHERE image_id IN (SELECT value FROM json_each(?))"
        var arguments: [(any DatabaseValueConvertible)?] = [idList]
        if let fields {
            sql += " AND field IN (SELECT value FROM json_each(?))"
            arguments.append(SQLiteCatalogStore.jsonList(fields))
        }
        let bound = StatementArguments(arguments), query = sql
        return try await read { db in
            var maps: [Int64: [String: String]] = [:]
            for row in try Row.fetchAll(db, sql: query, arguments: bound) {
                maps[row["image_id"], default: [:]][row["field"]] = row["text_value"]
            }
            return maps
        }
    }

    /// Facet aggregates over a set of images (all images when `ids` is nil):
    /// the `limit` most frequent values with counts for string and text
    /// fields (by descending count, then value), minimum and maximum for numbers.
    public func facetCounts(_ fields: [String], schema: FieldSchema, ids: [Int64]?,
                            limit: Int) async throws(CatalogStoreError) -> [FieldAggregate] {
        let names = try checkingInput { () throws(VisualSearchError) in try FacetShaper.fields(fields, schema: schema) }
        let scope = ids.map { _ in " AND image_id IN (SELECT value FROM json_each(?))" } ?? ""
        let idList = ids.map(SQLiteCatalogStore.jsonList)
        return try await read { db in
            try names.compactMap { name -> FieldAggregate? in
                guard let type = schema.fields[name] else { return nil }
                var arguments: [(any DatabaseValueConvertible)?] = [name]
                if let idList { arguments.append(idList) }
                if type.isNumeric {
                    let row = try Row.fetchOne(db, sql: "SELECT MIN(number_value) AS low, MAX(number_value) AS high FROM image_values WHERE field = ?" + scope,
                                               arguments: StatementArguments(arguments))
                    return .range(field: name, min: row?["low"], max: row?["high"])
                }
                arguments.append(limit)
                let rows = try Row.fetchAll(db, sql: """
                    SELECT text_value, COUNT(*) AS n FROM image_values WHERE field = ?\(scope)
                    GROUP BY text_value ORDER BY n DESC, text_value LIMIT ?
                    """, arguments: StatementArguments(arguments))
                return .values(field: name, counts: rows.map { (value: $0["text_value"], count: $0["n"]) })
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
