import Testing
@testable import ImageOps

@Suite("JPEG decoding")
struct JPEGDecoderTests {
    /// The colour of each displayed quadrant (TL, TR, BL, BR) after applying an
    /// orientation to the stored quadrant image red/green/blue/white.
    static let expectedQuadrants: [Int: [String]] = [
        1: ["red", "green", "blue", "white"],
        2: ["green", "red", "white", "blue"],
        3: ["white", "blue", "green", "red"],
        4: ["blue", "white", "red", "green"],
        5: ["red", "blue", "green", "white"],
        6: ["blue", "red", "white", "green"],
        7: ["white", "green", "blue", "red"],
        8: ["green", "white", "red", "blue"],
    ]

    static func name(_ pixel: (r: UInt8, g: UInt8, b: UInt8, a: UInt8)) -> String {
        switch (pixel.r > 128, pixel.g > 128, pixel.b > 128) {
        case (true, false, false): "red"
        case (false, true, false): "green"
        case (false, false, true): "blue"
        case (true, true, true): "white"
        default: "other"
        }
    }

    @Test("EXIF orientations 1–8 are applied: width and height are as displayed", arguments: 1...8)
    func orientation(_ orientation: Int) throws {
        let stored = Fixtures.quadrants(width: 64, height: 32)
        let jpeg = Fixtures.withOrientation(try ImageEncoders.JPEG(quality: JPEGQuality(0.95)).encode(stored), orientation)
        let decoded = try ImageDecoder.decode(jpeg, source: "o\(orientation)")
        #expect(decoded.header.orientation.rawValue == orientation)
        let expectedSize = orientation >= 5 ? PixelSize(width: 32, height: 64) : PixelSize(width: 64, height: 32)
        #expect(decoded.pixels.size == expectedSize)
        let w = decoded.pixels.width, h = decoded.pixels.height
        let seen = [(w / 4, h / 4), (3 * w / 4, h / 4), (w / 4, 3 * h / 4), (3 * w / 4, 3 * h / 4)]
            .map { Self.name(decoded.pixels.pixel(x: $0.0, y: $0.1)) }
        #expect(seen == Self.expectedQuadrants[orientation])
    }

    @Test("the fixture files with orientations 3, 6 and 8 decode to the displayed size")
    func orientationFixtures() throws {
        #expect(try Fixtures.decode("valid/exif_orientation_1.jpg").pixels.size == PixelSize(width: 480, height: 320))
        #expect(try Fixtures.decode("valid/exif_orientation_3.jpg").pixels.size == PixelSize(width: 480, height: 320))
        #expect(try Fixtures.decode("valid/exif_orientation_6.jpg").pixels.size == PixelSize(width: 320, height: 480))
        #expect(try Fixtures.decode("valid/exif_orientation_8.jpg").pixels.size == PixelSize(width: 320, height: 480))
        let upright = try Fixtures.decode("valid/exif_orientation_1.jpg", options: DecodingOptions(appliesOrientation: false))
        let rotated = try Fixtures.decode("valid/exif_orientation_3.jpg")
        #expect(Fixtures.meanAbsoluteDifference(ImageProcessors.Orient(.down).apply(to: upright.pixels), rotated.pixels) < 0.5)
    }

    @Test("shrink-on-load picks the smallest DCT scale that still covers the requested size",
          arguments: [(100, PixelSize(width: 160, height: 107)), (150, PixelSize(width: 160, height: 107)),
                      (200, PixelSize(width: 320, height: 214)), (400, PixelSize(width: 640, height: 427)),
                      (50, PixelSize(width: 80, height: 54)), (1, PixelSize(width: 80, height: 54))])
    func shrinkOnLoad(minimum: Int, expected: PixelSize) throws {
        let image = try Fixtures.decode("valid/baseline_420.jpg", options: DecodingOptions(minimumSize: PixelSize(width: minimum, height: minimum * 2 / 3)))
        #expect(image.pixels.size == expected)
        #expect(image.header.size == PixelSize(width: 640, height: 427))
    }

    @Test("shrink-on-load of a rotated JPEG covers the displayed minimum")
    func shrinkOnLoadRotated() throws {
        let image = try Fixtures.decode("valid/exif_orientation_6.jpg", options: DecodingOptions(minimumSize: PixelSize(width: 100, height: 150)))
        #expect(image.pixels.width >= 100 && image.pixels.height >= 150)
        #expect(image.pixels.height > image.pixels.width)
    }

    @Test("CMYK, YCCK, progressive, arithmetic and grayscale JPEGs decode to the same picture as the baseline")
    func variants() throws {
        let reference = try Fixtures.decode("valid/baseline_444.jpg").pixels
        for file in ["valid/cmyk.jpg", "valid/ycck_progressive_cmyk.jpg", "valid/progressive.jpg", "valid/baseline_420.jpg"] {
            let image = try Fixtures.decode(file).pixels
            #expect(image.size == reference.size, "\(file)")
            #expect(Fixtures.meanAbsoluteDifference(image, reference) < 6, "\(file) differs from the baseline")
        }
        let gray = try Fixtures.decode("valid/gray.jpg").pixels
        #expect(gray.pixel(x: 100, y: 100).r == gray.pixel(x: 100, y: 100).g)
        let arithmetic = try Fixtures.decode("valid/arithmetic.jpg").pixels
        #expect(arithmetic.size == PixelSize(width: 600, height: 400))
    }
}
