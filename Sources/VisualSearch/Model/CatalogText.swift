/// What characters catalog names and values may hold, one rule for every
/// store and every way in (the data API, `vsearch index`, queries).
///
/// SQLite binds text up to its first NUL, so `coffee_cup\0ignored` once
/// overwrote `coffee_cup`, and PostgreSQL refuses NUL outright; other
/// control characters are invisible in every answer and log. So:
///
/// - a **name** (`im_name`, a field name) holds no control character at all
///   (U+0000–U+001F, U+007F–U+009F);
/// - a **value** (metadata, an `fq` value) holds none but tab, line feed and
///   carriage return (a description may have lines).
///
/// ```swift
/// try CatalogText.validateName("coffee_cup\u{0}x", parameter: "im_name[0]")  // throws .invalidParameter
/// ```
public enum CatalogText {
    /// The first character a name may not hold, if any.
    public static func forbiddenInName(_ text: String) -> Unicode.Scalar? {
        text.unicodeScalars.first(where: isControl)
    }

    /// The first character a value may not hold, if any.
    public static func forbiddenInValue(_ text: String) -> Unicode.Scalar? {
        text.unicodeScalars.first { isControl($0) && !["\t", "\n", "\r"].contains($0) }
    }

    /// - Throws: ``VisualSearchError/invalidParameter(name:reason:)`` naming `parameter` and the character.
    public static func validateName(_ text: String, parameter: String) throws(VisualSearchError) {
        if let scalar = forbiddenInName(text) { throw .invalidParameter(name: parameter, reason: reason(text, scalar)) }
    }

    /// - Throws: ``VisualSearchError/invalidParameter(name:reason:)`` naming `parameter` and the character.
    public static func validateValue(_ text: String, parameter: String) throws(VisualSearchError) {
        if let scalar = forbiddenInValue(text) { throw .invalidParameter(name: parameter, reason: reason(text, scalar)) }
    }

    /// "\"coffee_cup\\0ignored\" contains the control character U+0000": the text with its controls made visible.
    public static func reason(_ text: String, _ scalar: Unicode.Scalar) -> String {
        "\"\(visible(text.prefix(80)))\" contains the control character \(code(scalar)), which names and values may not hold"
    }

    /// `U+0000`.
    static func code(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    /// The text with every control character written as `\0`, `\n` or `\u{1B}`.
    public static func visible(_ text: Substring) -> String { escaped(text, quoting: false) }

    /// Control characters written as escapes (`\0`, `\n`, `\r`, `\t`,
    /// `\u{1B}`) and, when `quoting`, `"` and `\` as `\"` and `\\` — text
    /// that can stand inside quotes on one line of a log or a message.
    public static func escaped(_ text: Substring, quoting: Bool) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"" where quoting: out += "\\\""
            case "\\" where quoting: out += "\\\\"
            case "\0": out += "\\0"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where isControl(scalar): out += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Whether a scalar is a control character (C0, DEL or C1).
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }
}
