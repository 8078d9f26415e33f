import Foundation
import SearchEngine
import TestSupport
import Testing

/// ``DominantColors/init(json:)`` decodes what `JSONDecoder` decodes, bit for bit, and
/// refuses what it refuses.
@Suite("DominantColors JSON", .timeLimit(.minutes(10)))
struct DominantColorsJSONTests {
    /// `JSONDecoder`'s reading of `text`: what a catalog load did before.
    static func decoded(_ text: String) -> DominantColors? {
        try? JSONDecoder().decode(DominantColors.self, from: Data(text.utf8))
    }

    static func fast(_ text: String) -> DominantColors? {
        Array(text.utf8).withUnsafeBytes { DominantColors(json: $0) }
    }

    /// Every float of a palette, as bits: equal palettes may still differ in the sign of a zero.
    static func bits(_ palette: DominantColors?) -> [UInt32]? {
        palette?.entries.flatMap { [$0.color.l, $0.color.a, $0.color.b, $0.fraction].map(\.bitPattern) }
    }

    @Test("palettes JSONEncoder wrote decode to the same floats")
    func encoded() throws {
        var random = TestSeed("DominantColorsJSONTests.encoded")
        for _ in 0..<2000 {
            let entries = (0..<Int.random(in: 0...8, using: &random)).map { _ in
                DominantColors.Entry(color: LabColor(l: Float.random(in: 0...100, using: &random), a: Float.random(in: -128...127, using: &random),
                                                     b: Float.random(in: -128...127, using: &random)),
                                     fraction: Float.random(in: 0...1, using: &random))
            }
            let text = String(decoding: try JSONEncoder().encode(DominantColors(entries: entries)), as: UTF8.self)
            #expect(Self.bits(Self.fast(text)) == entries.flatMap { [$0.color.l, $0.color.a, $0.color.b, $0.fraction].map(\.bitPattern) }, "\(text)")
        }
    }

    @Test("numbers read as JSONDecoder reads them: exponents, long digit strings, halfway between two floats, out of range")
    func numbers() {
        var random = TestSeed("DominantColorsJSONTests.numbers")
        var numbers = ["0", "-0", "0.0", "-0.000", "0e5", "0e0", "0.0E-0", "-0e-1", "00e1", "1", "-1", "1.5", "1E+2", "1e-2", "2.5e-3", "123456789012345678901234",
                       "0.1000000000000000055511151231257827", "3.4028235e38", "3.4028236e38", "1e39", "1e-38", "1e-45", "1e-46",
                       "1e-50", "0.000000000000000000000000000000000000000000000000001", "16777217", "33554435", "1.00000005960464477539062",
                       "01", "1.", ".5", "-", "+1", "1e", "1e+", "0x10", "NaN", "Infinity", "1_0", "１"]
        for _ in 0..<3000 {
            let value = Float(bitPattern: UInt32.random(in: 0x0080_0000...0x7F7F_FFFF, using: &random))
            let halfway = (Double(value) + Double(value.nextUp)) / 2
            numbers += ["\(value)", "\(halfway)", "\(halfway.nextUp)", "\(halfway.nextDown)", String(format: "%.12e", halfway),
                        "\(Int.random(in: -99_999_999...99_999_999, using: &random))e\(Int.random(in: -30...30, using: &random))"]
        }
        for number in numbers {
            let text = #"{"entries":[{"color":{"l":1,"a":2,"b":"# + number + #"},"fraction":0.5}]}"#
            #expect(Self.bits(Self.fast(text)) == Self.bits(Self.decoded(text)), "\(number)")
        }
    }

    @Test("other spellings of a palette decode as JSONDecoder decodes them, or fail as it fails")
    func spellings() {
        let texts = [
            #"{"entries":[]}"#, #" { "entries" : [ ] } "#, "{\n\t\"entries\":\r\n[]}", #"{"entries":[{"fraction":0.25,"color":{"b":3,"a":2,"l":1}}]}"#,
            #"{"entries":[{"color":{"l":1,"a":2,"b":3},"fraction":0.25},{"color":{"l":4,"a":5,"b":6},"fraction":0.75}]}"#,
            #"{"entries":[{"color":{"l":1,"a":2,"b":3},"fraction":0.25,"extra":[1,{"x":null}]}],"more":"yes"}"#,
            #"{"\u0065ntries":[{"color":{"l":1,"a":2,"b":3},"fraction":0.25}]}"#,
            #"{"entries":[{"color":{"l":1,"a":2,"b":3},"fraction":0.25}],"entries":[]}"#,
            #"{"entries":[{"color":{"l":1,"a":2},"fraction":0.25}]}"#, #"{"entries":[{"color":{"l":1,"a":2,"b":3}}]}"#,
            #"{"entries":null}"#, #"{}"#, "", "[]", "null", #"{"entries":[]} x"#, #"{"entries":[],}"#, #"{"entries":[{"color":{"l":1,"a":2,"b":3},"fraction":0.25},]}"#,
            #"{"entries":["#, #"{"entries":[{"color":{"l":"1","a":2,"b":3},"fraction":0.25}]}"#, "\u{FEFF}{\"entries\":[]}",
            "{\"entries\":[], \"\u{7}\":1}",
        ]
        for text in texts {
            #expect(Self.bits(Self.fast(text)) == Self.bits(Self.decoded(text)), "\(text)")
        }
        // Invalid UTF-8 reads as a String would read it: replaced, here inside a key JSONDecoder ignores.
        let invalid: [UInt8] = Array(#"{"entries":[],""#.utf8) + [0xFF] + Array(#"":1}"#.utf8)
        #expect(invalid.withUnsafeBytes { DominantColors(json: $0) } == Self.decoded(String(decoding: invalid, as: UTF8.self)))
    }
}
