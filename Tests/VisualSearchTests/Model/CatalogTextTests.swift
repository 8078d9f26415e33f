import Testing
import VisualSearch

@Suite("Catalog text: no control characters in names and values")
struct CatalogTextTests {
    @Test("names refuse every control character; values keep tab, line feed and carriage return", arguments: [
        ("coffee_cup\u{0}ignored", false, false), ("a\u{1}b", false, false), ("esc\u{1B}[31m", false, false), ("del\u{7F}", false, false),
        ("c1\u{85}", false, false), ("two\nlines", false, true), ("tab\there", false, true), ("crlf\r\n", false, true),
        ("coffee_cup", true, true), ("shop/cat é 猫 👍", true, true), ("", true, true),
    ])
    func rule(text: String, validName: Bool, validValue: Bool) {
        #expect((CatalogText.forbiddenInName(text) == nil) == validName, "\(text.debugDescription) as a name")
        #expect((CatalogText.forbiddenInValue(text) == nil) == validValue, "\(text.debugDescription) as a value")
    }

    @Test("the error names the parameter and the character, and shows the text with its controls made visible")
    func message() {
        #expect(throws: VisualSearchError.invalidParameter(name: "im_name[0]",
                                                           reason: "\"coffee_cup\\0ignored\" contains the control character U+0000, which names and values may not hold")) {
            try CatalogText.validateName("coffee_cup\u{0}ignored", parameter: "im_name[0]")
        }
    }
}
