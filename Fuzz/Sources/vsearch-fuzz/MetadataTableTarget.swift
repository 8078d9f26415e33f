import SearchEngine
import VisualSearch

/// `metadata`: the catalog metadata reader used by `vsearch index --metadata`: the same text as
/// CSV (RFC 4180 quoting) and as JSON lines, each row then checked against a schema with an int
/// and a float field, as indexing does.
enum MetadataTableTarget {
    /// The harness.
    static let target = FuzzTarget(
        name: "metadata",
        summary: "MetadataTable(csv:), MetadataTable(jsonLines:), MetadataTable.validate(_:schema:)",
        maximumInputLength: 16 * 1024,
        timeoutSeconds: 5,
        seedGlobs: [],
        run: { input in run(String(decoding: input, as: UTF8.self)) }
    )

    /// The schema rows are checked against: `count` int, `price` float.
    static let schema = FieldSchema(fields: ["count": .int, "price": .float, "brand": .string])

    /// Reads `text` both ways.
    static func run(_ text: String) {
        for table in [try? MetadataTable(csv: text), try? MetadataTable(jsonLines: text)] {
            guard let table else { continue }
            invariant(table.order.count == table.rows.count, "\(table.order.count) names in order, \(table.rows.count) rows")
            for name in table.order {
                guard let row = table.rows[name] else {
                    invariant(false, "\(name) is in order but has no row")
                    return
                }
                _ = MetadataTable.validate(row, schema: schema)
            }
        }
    }
}
