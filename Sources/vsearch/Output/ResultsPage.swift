import Foundation
import ImageOps
import VisualSearch

/// A self-contained HTML page of a search: the query and each result as an
/// embedded thumbnail (data: URIs, at most 240 px), with score and metadata.
enum ResultsPage {
    static func render(_ response: SearchResponse, query: String, queryImage: String?, source: (String) -> String?) -> String {
        var html = """
        <!doctype html><html><head><meta charset="utf-8"><title>vsearch: \(escape(query))</title>
        <style>body{font:14px system-ui,sans-serif;margin:2em;color:#222}figure{display:inline-block;margin:8px;width:240px;vertical-align:top}
        img{max-width:240px;max-height:240px;border:1px solid #ccc;display:block}figcaption{font-size:12px}.q{border:3px solid #2a6}
        table{font-size:11px;border-collapse:collapse}td{padding:0 4px;vertical-align:top}</style></head><body>
        <h1>\(escape(response.method)) — \(escape(query))</h1>
        <p>\(response.total) matches · page \(response.page) · request \(escape(response.requestID ?? "-"))</p>
        """
        if let queryImage, let uri = thumbnail(path: queryImage) {
            html += "<figure><img class=\"q\" src=\"\(uri)\"><figcaption>query</figcaption></figure><hr>"
        }
        for result in response.result {
            html += "<figure>"
            if let path = source(result.imageName), let uri = thumbnail(path: path) { html += "<img src=\"\(uri)\">" }
            html += "<figcaption><b>\(escape(result.imageName))</b> \(result.score.map { String(format: "%.4f", $0) } ?? "")<table>"
            for (key, value) in (result.valueMap ?? [:]).sorted(by: { $0.key < $1.key }) {
                html += "<tr><td>\(escape(key))</td><td>\(escape(value))</td></tr>"
            }
            html += "</table></figcaption></figure>"
        }
        html += "<p style=\"font-size:11px;color:#666\">Sample images keep their licences: see corpus/README.md "
            + "(china_temple and flower_dahlia: CC-BY-2.0, by danielbuechele and vultilion on Flickr).</p></body></html>\n"
        return html
    }

    static func thumbnail(path: String) -> String? {
        if path.hasPrefix("http://") || path.hasPrefix("https://") { return path }
        guard let decoded = try? ImageDecoder.decode(fileAt: path, options: DecodingOptions(minimumSize: PixelSize(width: 240, height: 240))),
              let jpeg = try? ImageEncoders.JPEG(quality: .thumbnail).encode(
                Resampler.resample(decoded.pixels, to: decoded.pixels.size.fitting(inside: 240))) else { return nil }
        return "data:image/jpeg;base64," + Data(jpeg).base64EncodedString()
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
