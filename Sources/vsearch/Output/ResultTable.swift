import VisualSearch
import Foundation

/// An aligned, human-readable table of a search response.
enum ResultTable {
    static func render(_ response: SearchResponse, query: String) -> String {
        var lines: [String] = []
        let shown = response.result.count
        let first = (response.page - 1) * response.limit
        let pages = response.limit > 0 ? (response.total + response.limit - 1) / response.limit : 0
        let range: String
        if shown > 0 {
            range = "showing \(first + 1)–\(first + shown) (page \(response.page) of \(pages))"
        } else if response.total > 0 {
            range = "page \(response.page) is past the last page (\(pages))"
        } else {
            range = "nothing to show"
        }
        lines.append("\(response.method) \(query): \(response.total) matches, \(range)" + (response.imageID.map { "  (im_id \($0))" } ?? ""))
        let fieldNames = Array(Set(response.result.flatMap { $0.valueMap?.keys.map { $0 } ?? [] })).sorted()
        var rows: [[String]] = [["#", "im_name", "score"] + fieldNames]
        for (offset, result) in response.result.enumerated() {
            rows.append([String(first + offset + 1), result.imageName, result.score.map { String(format: "%.4f", $0) } ?? "-"]
                + fieldNames.map { clip(result.valueMap?[$0] ?? "") })
        }
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            lines.append(row.enumerated().map { column, cell in
                column == 0 || column == 2 ? String(repeating: " ", count: widths[column] - cell.count) + cell
                    : cell + String(repeating: " ", count: widths[column] - cell.count)
            }.joined(separator: "  "))
        }
        for facet in response.facets ?? [] {
            if let range = facet.range {
                lines.append("facet \(facet.key): \(range.min) … \(range.max)")
            } else {
                let items: [String] = (facet.items ?? []).map { item in
                    if let count = item.count { return "\(item.value) (\(count))" }
                    return item.value
                }
                lines.append("facet \(facet.key): " + items.joined(separator: ", "))
            }
        }
        for object in response.objects ?? [] {
            lines.append("object \(object.type) \(object.box.map(String.init).joined(separator: ",")): "
                + object.result.prefix(5).map { "\($0.imageName) \($0.score.map { String(format: "%.3f", $0) } ?? "")" }.joined(separator: ", "))
        }
        if let note = response.offlineNote { lines.append("note: \(note)") }
        return lines.joined(separator: "\n")
    }

    static func clip(_ text: String) -> String {
        text.count > 40 ? String(text.prefix(39)) + "…" : text
    }
}
