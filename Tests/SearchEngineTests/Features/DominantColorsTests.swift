import ImageOps
import SearchEngine
import Testing
import TestSupport

@Suite("DominantColors", .timeLimit(.minutes(10)))
struct DominantColorsTests {
    /// Left half red, right half blue.
    static let half = PixelBuffer(width: 40, height: 40, hasAlpha: false, initializingWith: { out in
        for i in stride(from: 0, to: out.count, by: 4) {
            let red = (i / 4) % 40 < 20
            out[i] = red ? 220 : 20; out[i + 1] = 20; out[i + 2] = red ? 20 : 200; out[i + 3] = 255
        }
    })

    @Test("a palette covers the image; coverage of its main colours is high, of a far colour zero")
    func palette() {
        let palette = DominantColors.palette(of: Self.half)
        #expect(abs(palette.entries.reduce(0) { $0 + $1.fraction } - 1) < 1e-3)
        #expect(palette.entries.count == 2)
        #expect(palette.coverage(of: LabColor(red: 220, green: 20, blue: 20)) > 0.45)
        #expect(palette.coverage(of: LabColor(red: 20, green: 20, blue: 200)) > 0.45)
        #expect(palette.coverage(of: LabColor(red: 20, green: 220, blue: 20)) < 0.05)
    }

    @Test("entries come largest first and at most maxColors")
    func order() {
        let palette = DominantColors.palette(of: Self.half, maxColors: 1)
        #expect(palette.entries.count == 1 && abs(palette.entries[0].fraction - 1) < 1e-3)
        let wide = DominantColors(entries: [.init(color: LabColor(l: 50, a: 0, b: 0), fraction: 0.25)])
        #expect(wide.coverage(of: LabColor(l: 50, a: 0, b: 0)) == 0.25)
        #expect(wide.coverage(of: LabColor(l: 50 + DominantColors.nearDistance, a: 0, b: 0)) == 0)
    }

    @Test("a fully transparent image has no palette and covers nothing")
    func transparent() {
        let palette = DominantColors.palette(of: PixelBuffer(width: 8, height: 8, hasAlpha: true, fill: (255, 0, 0, 0)))
        #expect(palette.entries.isEmpty)
        #expect(palette.coverage(of: LabColor(red: 255, green: 0, blue: 0)) == 0)
    }
}
