import VisualSearch
import Foundation

/// An aligned, human-readable table of a search response. Every value from
/// the catalog or the query (`im_name`, field names and values, facets) is
/// escaped for the terminal (``TerminalText``) before it is measured and laid out.
enum ResultTable {
    /// `deduplicated`: the request dropped near-duplicates, which `total` still counts (see ``summary(total:shown:page:limit:deduplicated:)``).
    static func render(_ response: SearchResponse, query: String, deduplicated: Bool = false) -> String {
        var lines: [String] = []
        let query = TerminalText.escaped(query)
        let imageID = response.imageID.map { "  (im_id \(TerminalText.escaped($0)))" } ?? ""
        // Which similarity answered: a learned catalog answered by colour is never silent.
        let similarity = response.similarity.map { ", by \($0) similarity" } ?? ""
        if let objects = response.objects, response.result.isEmpty {
            // discoversearch: results per object, each with its own count and page; no flat list.
            lines.append("\(response.method) \(query): \(Terminal.count(objects.count, "object"))" + similarity + imageID)
            for object in objects {
                lines.append("")
                lines.append("object \(TerminalText.escaped(object.type)) score \(String(format: "%.2f", object.score)) "
                    + "box \(object.box.map(String.init).joined(separator: ",")): "
                    + summary(total: object.total, shown: object.result.count, page: response.page, limit: response.limit,
                              deduplicated: deduplicated))
                lines += table(object.result, first: (response.page - 1) * response.limit)
                lines += facetLines(object.facets ?? [])
            }
        } else {
            lines.append("\(response.method) \(query): "
                + summary(total: response.total, shown: response.result.count, page: response.page, limit: response.limit,
                          deduplicated: deduplicated) + similarity + imageID)
            if let types = response.productTypes, !types.isEmpty {
                lines.append("detected: " + types.map { "\(TerminalText.escaped($0.type)) \(String(format: "%.2f", $0.score)) "
                                                      + "[\($0.box.map(String.init).joined(separator: ","))]" }.joined(separator: "; "))
            }
            lines += table(response.result, first: (response.page - 1) * response.limit)
            lines += facetLines(response.facets ?? [])
        }
        if let note = response.offlineNote { lines.append("note: \(note)") }
        return lines.joined(separator: "\n")
    }

    /// `34 matches, showing 1–3 (page 1 of 12)`. With dedup, the count says
    /// what it is: matches before near-duplicates were dropped (dedup looks
    /// only at the results around the page, so the API's `total` — and page
    /// counts — are of matches, not of what dedup would keep of all of them).
    static func summary(total: Int, shown: Int, page: Int, limit: Int, deduplicated: Bool = false) -> String {
        let first = (page - 1) * limit
        let pages = limit > 0 ? (total + limit - 1) / limit : 0
        let range = if shown > 0 {
            "showing \(first + 1)–\(first + shown) (page \(page) of \(pages))"
        } else if total > 0 {
            "page \(page) is past the last page (\(pages))"
        } else {
            "nothing to show"
        }
        let counted = Terminal.count(total, "match", plural: "matches") + (deduplicated ? " before near-duplicates were dropped" : "")
        return "\(counted), \(range)"
    }

    /// The aligned rows of results numbered from `first + 1`, with a column per returned field; none when there are no results.
    static func table(_ results: [ImageResult], first: Int) -> [String] {
        guard !results.isEmpty else { return [] }
        var lines: [String] = []
        let fieldNames = Array(Set(results.flatMap { $0.valueMap?.keys.map { $0 } ?? [] })).sorted()
        var rows: [[String]] = [["#", "im_name", "score"] + fieldNames]
        for (offset, result) in results.enumerated() {
            rows.append([String(first + offset + 1), TerminalText.escaped(result.imageName), result.score.map { String(format: "%.4f", $0) } ?? "-"]
                + fieldNames.map { clip(TerminalText.escaped(result.valueMap?[$0] ?? "")) })
        }
        rows[0] = rows[0].map { TerminalText.escaped($0) }  // field names
        lines += aligned(rows, rightAligned: [0, 2])
        return lines
    }

    /// Rows (the first a header) laid out in columns two spaces apart; the
    /// `rightAligned` columns (numbers) right-aligned, the others left. Cells are already escaped.
    static func aligned(_ rows: [[String]], rightAligned: Set<Int>) -> [String] {
        let widths = (rows.first ?? []).indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { column, cell in
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                return rightAligned.contains(column) ? padding + cell : cell + padding
            }.joined(separator: "  ")
        }
    }

    static func facetLines(_ facets: [Facet]) -> [String] {
        var lines: [String] = []
        for facet in facets {
            if let range = facet.range {
                lines.append("facet \(TerminalText.escaped(facet.key)): \(TerminalText.escaped(range.min)) … \(TerminalText.escaped(range.max))")
            } else {
                let items: [String] = (facet.items ?? []).map { item in
                    if let count = item.count { return "\(TerminalText.escaped(item.value)) (\(count))" }
                    return TerminalText.escaped(item.value)
                }
                lines.append("facet \(TerminalText.escaped(facet.key)): " + items.joined(separator: ", "))
            }
        }
        return lines
    }

    static func clip(_ text: String) -> String {
        text.count > 40 ? String(text.prefix(39)) + "…" : text
    }
}
