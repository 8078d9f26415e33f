import Testing
@testable import ImageOps

@Suite("PNG decoding")
struct PNGDecoderTests {
    @Test("interlaced and non-interlaced PngSuite pairs decode to identical pixels",
          arguments: ["basn0g01", "basn0g02", "basn0g04", "basn0g08", "basn0g16", "basn2c08", "basn2c16",
                      "basn3p01", "basn3p02", "basn3p04", "basn3p08", "basn4a08", "basn4a16", "basn6a08", "basn6a16"])
    func interlacing(name: String) throws {
        let plain = try Fixtures.decode("pngsuite/basic/\(name).png").pixels
        let interlaced = try Fixtures.decode("pngsuite/interlacing/\(name.replacingOccurrences(of: "basn", with: "basi")).png").pixels
        #expect(plain.size == interlaced.size)
        #expect(plain.bytes == interlaced.bytes, "pixels differ: mean |Δ| = \(Fixtures.meanAbsoluteDifference(plain, interlaced))")
    }

    @Test("16-bit input is read as sRGB, not linear: it matches the 8-bit version of the same picture")
    func sixteenBit() throws {
        let gray8 = try Fixtures.decode("valid/gray8.png").pixels
        let gray16 = try Fixtures.decode("valid/gray16.png").pixels
        #expect(Fixtures.meanAbsoluteDifference(gray8, gray16) < 1.0)
    }

    @Test("alpha and tRNS transparency are reported and kept")
    func alpha() throws {
        let palette = try Fixtures.decode("valid/palette_trns.png")
        #expect(palette.header.hasAlpha && palette.pixels.hasAlpha)
        #expect(palette.pixels.pixel(x: 0, y: 0).a == 0)
        let rgba = try Fixtures.decode("valid/rgba8.png")
        #expect(rgba.pixels.hasAlpha)
        let opaque = try Fixtures.decode("valid/palette.png")
        #expect(!opaque.pixels.hasAlpha)
        #expect(opaque.pixels.pixel(x: 5, y: 5).a == 255)
    }

    @Test("degenerate sizes decode")
    func degenerate() throws {
        #expect(try Fixtures.decode("valid/1x1.png").pixels.pixel(x: 0, y: 0).r > 200)
        #expect(try Fixtures.decode("valid/20000x1.png").pixels.size == PixelSize(width: 20000, height: 1))
        #expect(try Fixtures.decode("valid/1x20000.png").pixels.size == PixelSize(width: 1, height: 20000))
    }

    @Test("a file cut inside IEND is an error when strict and a warning when lenient")
    func missingIEND() throws {
        let lenient = try Fixtures.decode("truncated/trunc_minus2B.png", options: DecodingOptions(failurePolicy: .lenient))
        #expect(lenient.warnings.contains { $0.hasPrefix("damaged after the image data") })
        #expect(throws: ImageOpsError.self) { try Fixtures.decode("truncated/trunc_minus2B.png") }
    }
}
