import Foundation

/// The words of a `text` field value or an `fq` text query, as a store
/// without its own tokenizer indexes them: runs of letters and digits,
/// lower-cased and without diacritics ("Café-au-lait" → cafe, au, lait), the
/// way SQLite's FTS5 `unicode61 remove_diacritics 2` tokenizer reads them.
package enum TextWords {
    package static func words(in text: String) -> [String] {
        let folded = text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
        var words: [String] = []
        var current = ""
        for scalar in folded.unicodeScalars {
            if scalar.properties.isAlphabetic || scalar.properties.numericType != nil {
                current.unicodeScalars.append(scalar)
            } else if !current.isEmpty {
                words.append(current)
                current = ""
            }
        }
        if !current.isEmpty { words.append(current) }
        return words
    }
}
