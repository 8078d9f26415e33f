import Foundation
import Testing
@testable import ImageOps

/// The thumbnail job's output formats: `same` per source format, forced
/// formats, and `auto` (lossless WebP for graphics, lossy for photos).
@Suite("Thumbnail output formats")
struct ThumbnailFormatTests {
    let encoders = ThumbnailEncoders()

    @Test("`same` keeps writable formats; GIF gives PNG and HEIC gives JPEG")
    func same() {
        let expected: [ImageFormat: ImageFormat] = [.jpeg: .jpeg, .png: .png, .webp: .webp, .avif: .avif, .gif: .png, .heif: .jpeg]
        for (source, output) in expected { #expect(encoders.fileFormat(for: .same, source: source) == output, "\(source)") }
        #expect(encoders.fileFormat(for: .auto, source: .jpeg) == .webp)
        #expect(encoders.fileFormat(for: .avif, source: .png) == .avif)
    }

    @Test("`auto` writes lossless WebP for graphics and lossy WebP for photos")
    func auto() throws {
        let logo = Fixtures.quadrants(width: 200, height: 120)
        let photo = try ImageDecoder.decode(fileAt: Fixtures.badInput + "/valid/baseline_444.jpg").pixels
        #expect(ThumbnailEncoders.looksLikeGraphics(logo) && !ThumbnailEncoders.looksLikeGraphics(photo))
        let lossless = try encoders.encoder(for: .auto, source: .png, pixels: logo).encode(logo)
        let lossy = try encoders.encoder(for: .auto, source: .jpeg, pixels: photo).encode(photo)
        // The WebP chunk after RIFF/WEBP: VP8L is lossless, VP8 lossy.
        #expect(Array(lossless[12..<16]) == Array("VP8L".utf8))
        #expect(Array(lossy[12..<16]) == Array("VP8 ".utf8))
        #expect(try ImageDecoder.decode(lossless, source: "logo.webp").pixels == logo)
    }

    @Test("the job writes every new input format's thumbnails with the right extension and magic",
          arguments: [(ThumbnailBatch.OutputFormat.same, "webp_lossy.webp", ImageFormat.webp),
                      (.same, "heic_photo.heic", .jpeg), (.same, "gif_photo.gif", .png), (.same, "avif_photo.avif", .avif),
                      (.webp, "gif_photo.gif", .webp), (.avif, "webp_lossy.webp", .avif), (.auto, "heic_photo.heic", .webp)])
    func job(format: ThumbnailBatch.OutputFormat, file: String, output: ImageFormat) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vsearch-formats-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var configuration = ThumbnailBatch.Configuration()
        configuration.rule = ThumbnailRule(sizes: [120], fit: .max)
        configuration.format = format
        configuration.jobs = 1
        let summary = try ThumbnailBatch(input: Fixtures.badInput + "/formats/" + file, output: folder, configuration: configuration).run()
        let thumbnail = try #require(summary.results.first?.thumbnails.first, "\(summary.results)")
        #expect(thumbnail.path.hasSuffix("." + output.preferredExtension) && thumbnail.width == 120)
        #expect(ImageFormat(sniffing: try FileIO.read(folder + "/" + thumbnail.path)) == output)
    }

    @Test("--keep-profile embeds the source's profile in the thumbnail; the default writes sRGB pixels and no profile")
    func keepProfile() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vsearch-profile-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var configuration = ThumbnailBatch.Configuration()
        configuration.rule = ThumbnailRule(sizes: [120], fit: .max)
        configuration.jobs = 1
        configuration.skipsUpToDate = false
        let source = Fixtures.root + "/colour/jpeg_prophoto.jpg"
        func thumbnail() throws -> DecodedImage {
            let summary = try ThumbnailBatch(input: source, output: folder, configuration: configuration).run()
            let path = try #require(summary.results.first?.thumbnails.first?.path)
            return try ImageDecoder.decode(fileAt: folder + "/" + path, options: DecodingOptions(colorHandling: .keepSourceProfile))
        }
        #expect(try thumbnail().colorProfile == nil)
        configuration.colorHandling = .keepSourceProfile
        let kept = try thumbnail()
        #expect(kept.colorProfile?.name?.contains("ProPhoto") == true)
    }
}
