import Foundation
import Testing
@testable import ImageOps

/// WebP, HEIF, AVIF and GIF inputs: what each decoder promises beyond "it
/// decodes" (the badinput table covers valid and damaged files of each).
@Suite("WebP, HEIF, AVIF and GIF decoders")
struct FormatDecoderTests {
    /// A smooth colourful test image (lossy codecs keep it close).
    static let gradient = Fixtures.image(width: 96, height: 64) { x, y in (UInt8(x * 255 / 95), UInt8(y * 255 / 63), 128, 255) }

    static func meanDifference(_ a: PixelBuffer, _ b: PixelBuffer) -> Double {
        var total = 0
        for index in a.bytes.indices where index % 4 != 3 { total += abs(Int(a.bytes[index]) - Int(b.bytes[index])) }
        return Double(total) / Double(a.width * a.height * 3)
    }

    @Test("lossless WebP round-trips pixels and alpha exactly")
    func webpLossless() throws {
        // Alpha never 0: under fully transparent pixels libwebp may drop the colour (WebP's default "inexact" mode).
        let image = Fixtures.image(width: 40, height: 30, alpha: true) { x, y in (UInt8(x * 6), UInt8(y * 8), 200, UInt8(50 + (x + y) * 3)) }
        let encoded = try ImageEncoders.WebP(isLossless: true).encode(image)
        #expect(ImageFormat(sniffing: encoded) == .webp)
        let decoded = try ImageDecoder.decode(encoded, source: "lossless.webp")
        #expect(decoded.pixels == image)
    }

    @Test("lossy WebP and AVIF round-trip close to the original", arguments: [ImageFormat.webp, .avif])
    func lossyRoundTrip(format: ImageFormat) throws {
        let encoder: any ImageEncoding = format == .webp ? ImageEncoders.WebP(quality: 90) : ImageEncoders.AVIF(quality: 80, speed: 10)
        let encoded = try encoder.encode(Self.gradient)
        #expect(ImageFormat(sniffing: encoded) == format)
        let decoded = try ImageDecoder.decode(encoded, source: "roundtrip")
        #expect(decoded.pixels.size == Self.gradient.size && !decoded.pixels.hasAlpha)
        let mean = Self.meanDifference(decoded.pixels, Self.gradient)
        #expect(mean < 3, "mean |Δ| \(mean)")
    }

    @Test("WebP shrinks on load when a smaller size is enough")
    func webpShrinkOnLoad() throws {
        let full = try Fixtures.decode("formats/webp_lossy.webp")
        let small = try Fixtures.decode("formats/webp_lossy.webp", options: DecodingOptions(minimumSize: PixelSize(width: 50, height: 30)))
        #expect(full.pixels.size == PixelSize(width: 240, height: 160))
        #expect(small.pixels.size == PixelSize(width: 60, height: 40))  // 1/4, still covering 50×30
    }

    @Test("alpha is kept: lossy WebP with alpha, HEIC and AVIF with alpha, transparent GIF",
          arguments: ["formats/webp_lossy_alpha.webp", "formats/heic_alpha.heic", "formats/avif_alpha.avif", "formats/gif_transparent.gif"])
    func alpha(file: String) throws {
        let decoded = try Fixtures.decode(file)
        #expect(decoded.pixels.hasAlpha && decoded.header.hasAlpha)
        #expect(stride(from: 3, to: decoded.pixels.bytes.count, by: 4).contains { decoded.pixels.bytes[$0] < 128 })
    }

    @Test("HEIF geometry: irot is applied, an EXIF orientation inside a HEIF is not applied again")
    func heifOrientation() throws {
        let rotated = try Fixtures.decode("formats/heic_irot_270ccw.heic")
        let upright = try Fixtures.decode("formats/heic_photo.heic")
        #expect(rotated.header.orientation == .up && rotated.pixels.size == rotated.header.size)
        #expect(rotated.pixels.size == PixelSize(width: 240, height: 160))
        let exifOnly = try Fixtures.decode("formats/heic_exif_orientation6_no_irot.heic")
        #expect(exifOnly.header.orientation == .up && exifOnly.pixels.size == upright.pixels.size)
    }

    /// Mean absolute difference between neighbouring rows: a photo's rows in
    /// order are alike (≈ 9 for this fixture, per Pillow's decode); left in the
    /// file's interlaced order they jump (≈ 20).
    static func rowContinuity(_ image: PixelBuffer) -> Double {
        var total = 0
        for y in 1..<image.height {
            for x in 0..<(image.width * 4) where x % 4 != 3 {
                total += abs(Int(image.bytes[y * image.bytesPerRow + x]) - Int(image.bytes[(y - 1) * image.bytesPerRow + x]))
            }
        }
        return Double(total) / Double((image.height - 1) * image.width * 3)
    }

    @Test("GIF: an interlaced frame's rows are put back in order")
    func gifInterlaced() throws {
        let continuity = Self.rowContinuity(try Fixtures.decode("formats/gif_interlaced.gif").pixels)
        #expect(continuity < 12, "neighbouring rows differ by \(continuity) on average")
    }

    @Test("animations give their first frame on the canvas", arguments: ["formats/gif_animated.gif", "formats/webp_animated.webp"])
    func firstFrame(file: String) throws {
        let decoded = try Fixtures.decode(file)
        #expect(decoded.pixels.size == PixelSize(width: 160, height: 106))
    }

    @Test("a GIF frame reaching past the logical screen grows the canvas; uncovered areas are transparent")
    func gifFrameOutsideScreen() throws {
        let decoded = try Fixtures.decode("formats/gif_frame_outside_screen.gif")
        #expect(decoded.pixels.size == PixelSize(width: 240, height: 159) && decoded.pixels.hasAlpha)
    }

    @Test("damaged files of the new formats are typed errors naming the input and format",
          arguments: ["formats/webp_trunc_50pct.webp", "formats/heic_trunc_50pct.heic", "formats/avif_trunc_100B.avif",
                      "formats/gif_trunc_50pct.gif", "formats/gif_trunc_10B.gif", "formats/webp_trunc_20B.webp"])
    func truncated(file: String) {
        let result = Result { () throws(ImageOpsError) in try Fixtures.decode(file) }
        guard case .failure(let error) = result, case .truncated = error else {
            Issue.record("expected truncated, got \(result)")
            return
        }
        #expect(error.description.contains(file))
    }

    @Test("headers of the new formats are read without decoding")
    func headers() throws {
        for (file, format) in [("formats/webp_lossy.webp", ImageFormat.webp), ("formats/heic_photo.heic", .heif),
                               ("formats/avif_photo.avif", .avif), ("formats/gif_photo.gif", .gif)] {
            let header = try ImageDecoder.readHeader(Fixtures.bytes(file), source: file)
            #expect(header.format == format && header.size == PixelSize(width: 240, height: 160), "\(file)")
        }
    }
}
