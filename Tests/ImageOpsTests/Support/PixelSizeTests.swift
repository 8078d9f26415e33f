import Testing
@testable import ImageOps

@Suite("PixelSize")
struct PixelSizeTests {
    @Test("fitting inside a square shrinks the longer side to the square and rounds the other half up",
          arguments: [
              (PixelSize(width: 1600, height: 1200), 512, PixelSize(width: 512, height: 384)),
              (PixelSize(width: 1200, height: 1600), 512, PixelSize(width: 384, height: 512)),
              (PixelSize(width: 1000, height: 1000), 512, PixelSize(width: 512, height: 512)),
              (PixelSize(width: 300, height: 200), 512, PixelSize(width: 300, height: 200)),
              (PixelSize(width: 20000, height: 1), 400, PixelSize(width: 400, height: 1)),
              (PixelSize(width: 3, height: 2), 2, PixelSize(width: 2, height: 1)),
              (PixelSize(width: 401, height: 301), 400, PixelSize(width: 400, height: 300)),
          ])
    func fitting(source: PixelSize, side: Int, expected: PixelSize) {
        #expect(source.fitting(inside: side) == expected)
    }

    @Test("pixel count reports overflow instead of trapping")
    func overflow() {
        #expect(PixelSize(width: Int.max, height: 2).pixelCount == nil)
        #expect(PixelSize(width: 100_000, height: 100_000).pixelCount == 10_000_000_000)
    }
}

@Suite("ImageLimits")
struct ImageLimitsTests {
    @Test("an image exactly at the pixel limit passes and one pixel more is rejected")
    func exactPixelLimit() throws {
        let limits = ImageLimits(maxPixels: 100 * 100)
        try limits.check(PixelSize(width: 100, height: 100), source: "a")
        #expect(throws: ImageOpsError.limitExceeded(source: "b", limit: .pixels(width: 10001, height: 1, maximum: 10000))) {
            try limits.check(PixelSize(width: 10001, height: 1), source: "b")
        }
    }

    @Test("sides above the side limit and sizes of zero are rejected")
    func sidesAndZero() {
        let limits = ImageLimits(maxSide: 1000)
        #expect(throws: ImageOpsError.self) { try limits.check(PixelSize(width: 1001, height: 1), source: "s") }
        #expect(throws: ImageOpsError.invalidDimensions(source: "z", width: 10, height: 0)) {
            try limits.check(PixelSize(width: 10, height: 0), source: "z")
        }
    }

    @Test("the input byte limit is checked from the file size before reading")
    func inputBytes() throws {
        let path = Fixtures.badInput + "/valid/cmyk.jpg"
        #expect(throws: ImageOpsError.limitExceeded(source: path, limit: .inputBytes(135264, maximum: 1000))) {
            _ = try ImageDecoder.decode(fileAt: path, options: DecodingOptions(limits: ImageLimits(maxInputBytes: 1000)))
        }
    }
}
