import Foundation
import ImageOps
import VisualSearch

/// A self-contained HTML page of a search: the query (its image with the box
/// drawn on it, or a colour swatch), the active filters, facets, paging, and
/// each result as an embedded thumbnail (at most 240 px) linked to its
/// original, with score and metadata. Works from any directory: local
/// images are embedded as data URIs; remote ones are linked.
enum ResultsPage {
    /// What was searched for.
    struct Query {
        var title: String
        /// A local query image, shown with the box.
        var imageFile: String?
        var box: PixelBox?
        /// A catalog image the query started from.
        var catalogImage: String?
        var color: HexColor?

        init(title: String, imageFile: String? = nil, box: PixelBox? = nil, catalogImage: String? = nil, color: HexColor? = nil) {
            self.title = title
            self.imageFile = imageFile
            self.box = box
            self.catalogImage = catalogImage
            self.color = color
        }
    }

    static func render(_ response: SearchResponse, query: Query, parameters: SearchParameters, sources: [String: String]) -> String {
        var html = """
        <!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
        <title>vsearch: \(escape(query.title))</title>
        <style>body{font:14px system-ui,sans-serif;margin:2em;color:#222}figure{display:inline-block;margin:8px;width:240px;vertical-align:top}
        img{max-width:240px;max-height:240px;border:1px solid #ccc;display:block}figcaption{font-size:12px}
        .query{position:relative;display:inline-block}.query img{border:3px solid #2a6;max-width:320px;max-height:320px}
        .box{position:absolute;border:2px solid #e33;box-shadow:0 0 0 1px #fff}.swatch{display:inline-block;width:64px;height:64px;border:1px solid #999;vertical-align:middle}
        .chip{display:inline-block;background:#eef;border-radius:10px;padding:1px 8px;margin:2px}table{font-size:11px;border-collapse:collapse}
        td{padding:0 4px;vertical-align:top}.facets{font-size:12px;margin:1em 0}</style></head><body>
        <h1>\(escape(response.method)) — \(escape(query.title))</h1>

        """
        html += "<section>" + queryBlock(query, sources: sources) + "</section>"
        let first = (response.page - 1) * response.limit
        let pages = response.limit > 0 ? max(1, (response.total + response.limit - 1) / response.limit) : 1
        html += "<p>\(response.total) matches · page \(response.page) of \(pages)"
        if !response.result.isEmpty { html += " (results \(first + 1)–\(first + response.result.count))" }
        html += " · reqid \(escape(response.requestID ?? "-"))</p>"
        if !parameters.filters.isEmpty {
            html += "<p>Filters: " + parameters.filters.map { "<span class=\"chip\">\(escape($0.description))</span>" }.joined(separator: " ") + "</p>"
        }
        if let facets = response.facets, !facets.isEmpty {
            html += "<div class=\"facets\">"
            for facet in facets {
                if let range = facet.range {
                    html += "<div><b>\(escape(facet.key))</b>: \(escape(range.min)) – \(escape(range.max))</div>"
                } else {
                    let items = (facet.items ?? []).map { item in escape(item.value) + (item.count.map { " (\($0))" } ?? "") }
                    html += "<div><b>\(escape(facet.key))</b>: \(items.joined(separator: ", "))</div>"
                }
            }
            html += "</div>"
        }
        html += "<hr>"
        for result in response.result + (response.objects ?? []).flatMap(\.result) {
            html += figure(result, source: sources[result.imageName])
        }
        if let note = response.offlineNote { html += "<p><i>\(escape(note))</i></p>" }
        html += "<p style=\"font-size:11px;color:#666\">Sample images keep their licences: see corpus/README.md.</p></body></html>\n"
        return html
    }

    static func queryBlock(_ query: Query, sources: [String: String]) -> String {
        if let color = query.color {
            return "<p>Colour <span class=\"swatch\" style=\"background:#\(color.hex)\"></span> \(escape(color.description))</p>"
        }
        let path = query.imageFile ?? query.catalogImage.flatMap { sources[$0] }
        guard let path, let embedded = thumbnail(path: path, side: 320) else { return "<p>Query: \(escape(query.title))</p>" }
        var block = "<div class=\"query\"><img src=\"\(embedded.uri)\" alt=\"query image\">"
        if let box = query.box, embedded.scale > 0 {
            let s = embedded.scale
            let width = max(2, Int(Double(box.x2 - box.x1) * s)), height = max(2, Int(Double(box.y2 - box.y1) * s))
            block += "<div class=\"box\" style=\"left:\(Int(Double(box.x1) * s) + 3)px;top:\(Int(Double(box.y1) * s) + 3)px;width:\(width)px;height:\(height)px\"></div>"
        }
        return block + "</div>"
    }

    static func figure(_ result: ImageResult, source: String?) -> String {
        var html = "<figure>"
        if let source {
            let link = isRemote(source) ? source : URL(fileURLWithPath: source).absoluteString
            let image = isRemote(source) ? source : thumbnail(path: source, side: 240)?.uri
            if let image { html += "<a href=\"\(escape(link))\"><img src=\"\(escape(image))\" alt=\"\(escape(result.imageName))\" loading=\"lazy\"></a>" }
        }
        html += "<figcaption><b>\(escape(result.imageName))</b> \(result.score.map { String(format: "%.4f", $0) } ?? "")<table>"
        for (key, value) in (result.valueMap ?? [:]).sorted(by: { $0.key < $1.key }) {
            html += "<tr><td>\(escape(key))</td><td>\(escape(value))</td></tr>"
        }
        return html + "</table></figcaption></figure>"
    }

    static func isRemote(_ source: String) -> Bool {
        let lower = source.lowercased()
        return lower.hasPrefix("http://") || lower.hasPrefix("https://")
    }

    /// A JPEG data URI of a local image fitted in `side`, and its scale (thumbnail ÷ original).
    static func thumbnail(path: String, side: Int) -> (uri: String, scale: Double)? {
        guard let decoded = try? ImageDecoder.decode(fileAt: path, options: DecodingOptions(minimumSize: PixelSize(width: side, height: side))) else {
            return nil
        }
        let target = decoded.pixels.size.fitting(inside: side)
        guard let jpeg = try? ImageEncoders.JPEG(quality: .thumbnail).encode(Resampler.resample(decoded.pixels, to: target)) else { return nil }
        return ("data:image/jpeg;base64," + Data(jpeg).base64EncodedString(), Double(target.maxDimension) / Double(decoded.header.size.maxDimension))
    }

    /// HTML text and attribute escaping.
    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "'", with: "&#39;")
    }
}
