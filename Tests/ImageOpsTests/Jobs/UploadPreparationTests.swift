import Testing
@testable import ImageOps

@Suite("Upload preparation (ViSearch resizing settings)")
struct UploadPreparationTests {
    static func jpeg(width: Int, height: Int) throws -> [UInt8] {
        try ImageEncoders.JPEG(quality: JPEGQuality(0.9)).encode(Fixtures.quadrants(width: width, height: height))
    }

    @Test("presets fit portrait, landscape and square inside the box, aspect kept",
          arguments: [
              (1600, 1200, UploadSettings.standard, PixelSize(width: 512, height: 384)),
              (1200, 1600, UploadSettings.standard, PixelSize(width: 384, height: 512)),
              (1500, 1500, UploadSettings.standard, PixelSize(width: 512, height: 512)),
              (3000, 1000, UploadSettings.highQuality, PixelSize(width: 1024, height: 341)),
              (1000, 3000, UploadSettings.highQuality, PixelSize(width: 341, height: 1024)),
              (300, 200, UploadSettings.standard, PixelSize(width: 300, height: 200)),
          ])
    func presets(width: Int, height: Int, settings: UploadSettings, expected: PixelSize) throws {
        let prepared = try UploadPreparation.prepare(try Self.jpeg(width: width, height: height), source: "t", settings: settings)
        #expect(prepared.size == expected)
        let decoded = try ImageDecoder.decode(prepared.jpeg, source: "prepared")
        #expect(decoded.header.format == .jpeg && decoded.pixels.size == expected)
    }

    @Test("the presets are 512 px at 0.97 and 1024 px at 0.985")
    func presetValues() {
        #expect(UploadSettings.standard.maxSide == 512 && UploadSettings.standard.quality.libjpegValue == 97)
        #expect(UploadSettings.highQuality.maxSide == 1024 && UploadSettings.highQuality.quality.libjpegValue == 99)
    }

    @Test("custom sizes above 1024 are clamped, and landscape keeps its aspect (unlike the reference SDK)")
    func customClamp() throws {
        let settings = try UploadSettings(maxSide: 2000, quality: JPEGQuality(0.9))
        #expect(settings.maxSide == 1024)
        let prepared = try UploadPreparation.prepare(try Self.jpeg(width: 2400, height: 1200), source: "t", settings: settings)
        #expect(prepared.size == PixelSize(width: 1024, height: 512))
        #expect(throws: ImageOpsError.self) { try UploadSettings(maxSide: 0, quality: .uploadStandard) }
    }

    @Test("a PNG with alpha becomes an opaque JPEG")
    func pngBecomesJPEG() throws {
        let prepared = try UploadPreparation.prepare(try Fixtures.bytes("valid/rgba8.png"), source: "rgba8.png")
        #expect(ImageFormat(sniffing: prepared.jpeg) == .jpeg)
        #expect(prepared.size == PixelSize(width: 378, height: 400))
    }

    @Test("EXIF orientation is baked in: a 480×320 file shown rotated becomes an upright 320×480 upload")
    func orientationBakedIn() throws {
        let prepared = try UploadPreparation.prepare(try Fixtures.bytes("valid/exif_orientation_6.jpg"), source: "o6",
                                                     settings: try UploadSettings(maxSide: 240, quality: .uploadStandard))
        #expect(prepared.size == PixelSize(width: 160, height: 240))
        let decoded = try ImageDecoder.decode(prepared.jpeg, source: "prepared")
        #expect(decoded.header.orientation == .up)
    }

    @Test("a box is scaled into the prepared image's pixels, truncated, as the SDKs do")
    func boxScaled() throws {
        let prepared = try UploadPreparation.prepare(try Self.jpeg(width: 2048, height: 1024), source: "t",
                                                     box: PixelBox(x1: 101, y1: 203, x2: 1001, y2: 999))
        #expect(prepared.scale == 0.25)
        #expect(prepared.box == PixelBox(x1: 25, y1: 50, x2: 250, y2: 249))
    }

    @Test("a box past the edges is clamped before scaling; a point stays a point")
    func boxClampedAndPoint() throws {
        let bytes = try Self.jpeg(width: 1024, height: 1024)
        #expect(try UploadPreparation.prepare(bytes, source: "t", box: PixelBox(x1: -10, y1: 0, x2: 5000, y2: 512)).box
            == PixelBox(x1: 0, y1: 0, x2: 512, y2: 256))
        #expect(try UploadPreparation.prepare(bytes, source: "t", box: PixelBox(x1: 100, y1: 100, x2: 100, y2: 100)).box
            == PixelBox(x1: 50, y1: 50, x2: 50, y2: 50))
    }

    @Test("crop mode uploads just the box, resized, and reports no box")
    func cropMode() throws {
        let prepared = try UploadPreparation.prepare(try Self.jpeg(width: 2000, height: 1000), source: "t",
                                                     box: PixelBox(x1: 1000, y1: 0, x2: 2000, y2: 500), boxHandling: .crop)
        #expect(prepared.box == nil)
        #expect(prepared.size == PixelSize(width: 512, height: 256))
        let decoded = try ImageDecoder.decode(prepared.jpeg, source: "crop")
        // The top-right quadrant of the source is green.
        let centre = decoded.pixels.pixel(x: 256, y: 128)
        #expect(centre.g > 200 && centre.r < 60 && centre.b < 60)
    }

    @Test("an undecodable upload is a typed error naming the source")
    func badUpload() {
        #expect(throws: ImageOpsError.emptyInput(source: "upload")) { try UploadPreparation.prepare([], source: "upload") }
    }
}
