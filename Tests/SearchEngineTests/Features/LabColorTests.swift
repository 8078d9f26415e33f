import SearchEngine
import TestSupport
import Testing
import VisualSearch

@Suite("LabColor", .timeLimit(.minutes(10)))
struct LabColorTests {
    @Test("hex colours in their ViSearch and CSS forms are the same colour", arguments: ["ff00ff", "#FF00FF", "#f0f", "f0f"])
    func hex(text: String) throws {
        let color = LabColor(try HexColor(parsing: text))
        #expect(color.hex == "ff00ff")
        #expect(color == LabColor(red: 255, green: 0, blue: 255))
    }

    @Test("reference sRGB colours convert to their published L*a*b* values", arguments: [
        (UInt8(255), UInt8(255), UInt8(255), Float(100), Float(0), Float(0)),
        (0, 0, 0, 0, 0, 0),
        (255, 0, 0, 53.24, 80.09, 67.20),
        (0, 255, 0, 87.73, -86.18, 83.18),
        (0, 0, 255, 32.30, 79.19, -107.86),
        (128, 128, 128, 53.59, 0, 0),
    ])
    func reference(red: UInt8, green: UInt8, blue: UInt8, l: Float, a: Float, b: Float) {
        let color = LabColor(red: red, green: green, blue: blue)
        #expect(color.distance(to: LabColor(l: l, a: a, b: b)) < 0.1, "\(color)")
    }

    @Test("hex round-trips every colour of a random sample; approximate is within 7 ΔE, mostly within 2")
    func roundTrip() {
        var random = TestSeed("LabColorTests.roundTrip")
        var errors: [Float] = []
        for _ in 0..<2000 {
            let (r, g, b) = (UInt8.random(in: 0...255, using: &random), UInt8.random(in: 0...255, using: &random), UInt8.random(in: 0...255, using: &random))
            let exact = LabColor(red: r, green: g, blue: b)
            let hex = [r, g, b].map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
            #expect(exact.hex == hex, "seed \(random.seed)")
            errors.append(LabColor.approximate(red: r, green: g, blue: b).distance(to: exact))
        }
        #expect(errors.allSatisfy { $0 < 7 }, "worst \(errors.max() ?? 0), seed \(random.seed)")
        #expect(errors.sorted()[errors.count / 2] < 2, "median \(errors.sorted()[errors.count / 2]), seed \(random.seed)")
    }

    @Test("distance is CIE76: Euclidean, symmetric, zero to itself")
    func distance() {
        let a = LabColor(l: 10, a: 20, b: 30), b = LabColor(l: 13, a: 24, b: 30)
        #expect(a.distance(to: b) == 5 && b.distance(to: a) == 5 && a.distance(to: a) == 0)
    }
}
