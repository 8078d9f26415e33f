import Foundation
import VisualSearch

/// Turns the facets a request asks for into field names, and a store's raw
/// aggregates into the API's ``Facet`` values. Pure: table-tested.
public enum FacetShaper {
    /// The fields to facet on: `*` expands to every declared field (sorted);
    /// duplicates are dropped, order kept.
    /// - Throws: ``VisualSearchError/unknownField(_:)`` for an undeclared field.
    public static func fields(_ requested: [String], schema: FieldSchema) throws(VisualSearchError) -> [String] {
        var names: [String] = []
        for field in requested {
            if field == "*" {
                names += schema.fields.keys.sorted()
            } else {
                guard schema.fields[field] != nil else { throw .unknownField(field, known: schema.fields.keys.sorted()) }
                names.append(field)
            }
        }
        var seen = Set<String>()
        return names.filter { seen.insert($0).inserted }
    }

    /// The API's facets: value lists (counts only with `showCount`), and
    /// numeric ranges as integer strings widened to the enclosing integers
    /// (`9.5…420.2` → `"9"…"421"`: every SDK parses integers; the Swift SDK
    /// breaks on JSON numbers).
    public static func facets(_ aggregates: [FieldAggregate], showCount: Bool) -> [Facet] {
        aggregates.map { aggregate in
            switch aggregate {
            case .values(let field, let counts):
                return Facet(key: field, items: counts.map { Facet.Item(value: $0.value, count: showCount ? $0.count : nil) })
            case .range(let field, let low?, let high?):
                return Facet(key: field, range: Facet.Range(min: integerText(low.rounded(.down)), max: integerText(high.rounded(.up))))
            case .range(let field, _, _):
                return Facet(key: field, range: nil)
            }
        }
    }

    /// An integral value as integer text; values beyond `Int` (a float field
    /// may hold 1e300) are written out in full rather than trapping.
    static func integerText(_ value: Double) -> String {
        if let exact = Int(exactly: value) { return String(exact) }
        return value.isFinite ? String(format: "%.0f", value) : String(value)
    }
}
