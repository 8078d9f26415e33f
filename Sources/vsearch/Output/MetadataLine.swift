import Foundation
import SearchEngine
import VisualSearch

/// One line of `vsearch catalog export`: a JSON object with `im_name` and the
/// image's metadata, keys sorted, numbers of int and float fields as JSON
/// numbers (a float keeps its decimal point, `3.0`, so reading the line back
/// infers float again) — what `vsearch index --metadata` reads.
enum MetadataLine {
    static func render(_ image: ExportedImage, schema: FieldSchema) -> String {
        var members = ["\(string("im_name")):\(string(image.imageName))"]
        for (field, value) in image.metadata.sorted(by: { $0.key < $1.key }) {
            members.append("\(string(field)):\(literal(value, type: schema.fields[field]))")
        }
        return "{" + members.joined(separator: ",") + "}"
    }

    /// The value as a JSON number when its field is numeric and it parses, else as a string.
    static func literal(_ value: String, type: FieldType?) -> String {
        switch type {
        case .int?: if let number = Int(value) { return String(number) }
        case .float?: if let number = Double(value), number.isFinite { return number.description }
        default: break
        }
        return string(value)
    }

    /// A JSON string literal.
    static func string(_ text: String) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return (try? encoder.encode(text)).map { String(decoding: $0, as: UTF8.self) } ?? "\"\""
    }
}
