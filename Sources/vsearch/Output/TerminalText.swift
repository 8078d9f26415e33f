/// Text from outside — event fields, catalog values (`im_name`, metadata
/// values, field names), what a user typed — made safe to print on a
/// terminal: every character a terminal would act on instead of showing is
/// replaced by a visible escape, so nothing printed can move the cursor,
/// change the title, ring the bell, forge a table row or reorder a line.
///
/// Escaped: the C0 controls (U+0000–U+001F: ESC, BEL, NUL, CR, LF, TAB…),
/// DEL (U+007F), the C1 controls (U+0080–U+009F: a UTF-8 terminal may take
/// U+009B for CSI), the bidirectional embeddings, overrides and isolates
/// (U+202A–U+202E, U+2066–U+2069), the marks U+200E, U+200F, U+061C and the
/// line and paragraph separators U+2028, U+2029. Each becomes JSON's escape
/// for it — `\n`, `\r`, `\t`, else `\u001b` (four hex digits) — so the same
/// function keeps JSON valid: those characters only ever stand inside a JSON
/// string, where the escape means the same character again
/// (`catalog export` still round-trips).
///
/// ```swift
/// TerminalText.escaped("shoe\u{1B}]0;pwned\u{07}")   // shoe\u001b]0;pwned\u0007
/// TerminalText.escaped("a\nb", keepingLineBreaks: true)   // "a\nb" as it is: a whole message's own lines
/// ```
enum TerminalText {
    /// `text` with every character a terminal acts on escaped; with
    /// `keepingLineBreaks`, LF and TAB are left as they are (for whole
    /// messages whose values were escaped one by one already).
    static func escaped(_ text: String, keepingLineBreaks: Bool = false) -> String {
        guard text.utf8.contains(where: { $0 < 0x20 || $0 >= 0x7F }) else { return text }  // plain ASCII text: as it is
        var out = String.UnicodeScalarView()
        var changed = false
        for scalar in text.unicodeScalars {
            guard isUnsafe(scalar), !(keepingLineBreaks && (scalar == "\n" || scalar == "\t")) else {
                out.append(scalar)
                continue
            }
            changed = true
            out.append(contentsOf: escape(scalar).unicodeScalars)
        }
        return changed ? String(out) : text
    }

    /// Whether a terminal would act on `scalar` instead of showing it.
    static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: true
        case 0x061C, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// JSON's escape for `scalar`: `\n`, `\r`, `\t`, else `\u` and four hex digits.
    static func escape(_ scalar: Unicode.Scalar) -> String {
        switch scalar {
        case "\n": return "\\n"
        case "\r": return "\\r"
        case "\t": return "\\t"
        default:
            let hex = String(scalar.value, radix: 16)
            return "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        }
    }
}
