import Testing
@testable import ImageOps

@Suite("Encoding")
struct EncoderTests {
    let photo = Fixtures.image(width: 97, height: 61) { x, y in
        (UInt8(x * 255 / 96), UInt8(y * 255 / 60), UInt8((x + y) % 256), 255)
    }

    @Test("JPEG quality 0...1 maps to libjpeg 1...100, rounding halves up",
          arguments: [(0.97, 97), (0.985, 99), (0.85, 85), (0.0, 1), (1.0, 100), (0.5, 50), (0.005, 1), (0.995, 100)])
    func qualityMapping(fraction: Double, expected: Int) throws {
        #expect(try JPEGQuality(fraction).libjpegValue == expected)
    }

    @Test("quality parses fractions and percentages, and rejects nonsense")
    func qualityParsing() throws {
        #expect(try JPEGQuality(parsing: "0.85").libjpegValue == 85)
        #expect(try JPEGQuality(parsing: "85").libjpegValue == 85)
        for bad in ["-1", "101", "abc", "nan", "inf"] {
            #expect(throws: ImageOpsError.self) { try JPEGQuality(parsing: bad) }
        }
        #expect(throws: ImageOpsError.self) { try JPEGQuality(1.5) }
    }

    @Test("JPEG round trip keeps the size and stays close to the original")
    func jpegRoundTrip() throws {
        let jpeg = try ImageEncoders.JPEG(quality: JPEGQuality(0.95)).encode(photo)
        #expect(ImageFormat(sniffing: jpeg) == .jpeg)
        let decoded = try ImageDecoder.decode(jpeg, source: "round trip")
        #expect(decoded.pixels.size == photo.size)
        #expect(Fixtures.meanAbsoluteDifference(decoded.pixels, photo) < 3)
    }

    @Test("higher JPEG quality gives larger files")
    func qualityMatters() throws {
        let low = try ImageEncoders.JPEG(quality: JPEGQuality(0.3)).encode(photo)
        let high = try ImageEncoders.JPEG(quality: JPEGQuality(0.97)).encode(photo)
        #expect(low.count < high.count)
    }

    @Test("PNG round trip is lossless, with and without alpha, for every filter",
          arguments: ImageEncoders.PNG.Filter.allCases)
    func pngRoundTrip(filter: ImageEncoders.PNG.Filter) throws {
        let translucent = Fixtures.image(width: 33, height: 17, alpha: true) { x, y in
            (UInt8(x * 7 % 256), UInt8(y * 13 % 256), 200, UInt8((x * y) % 256))
        }
        for image in [photo, translucent] {
            let png = try ImageEncoders.PNG(compressionLevel: 6, filter: filter).encode(image)
            let decoded = try ImageDecoder.decode(png, source: "png round trip")
            #expect(decoded.pixels == image)
        }
    }

    @Test("alpha is composited over white when encoding JPEG")
    func jpegFlattensAlpha() throws {
        let transparent = PixelBuffer(width: 16, height: 16, hasAlpha: true, fill: (0, 0, 0, 0))
        let decoded = try ImageDecoder.decode(try ImageEncoders.JPEG().encode(transparent), source: "flat")
        #expect(decoded.pixels.pixel(x: 8, y: 8).r > 250)
    }
}
