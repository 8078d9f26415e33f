import Foundation
import Testing
@testable import ImageOps

/// Thumbnails and uploads carry no private metadata — no EXIF, GPS, XMP,
/// IPTC, maker notes or comments — unless a shop asks to keep its rights
/// notice (Artist and Copyright, nothing else). Fixtures: `Tests/Fixtures/metadata/README.md`.
@Suite("Metadata never leaks")
struct MetadataTests {
    static let directory = Fixtures.root + "/metadata"
    static let sources = ["exif_gps_xmp.jpg", "exif_gps_xmp.png", "exif_gps.webp"]
    /// Strings from the fixtures' EXIF, GPS, maker note, XMP, IPTC and comments.
    static let secrets = ["ExampleCam", "EC-1 Leakproof", "SN-SECRET-0042", "MAKERNOTE-MARKER-8X4", "http://ns.adobe.com/xap/1.0/",
                          "xmp-marker-7Q2", "iptc-marker-5K9", "com-marker-3Z8", "png-comment-marker-4T1", "48,51.494N",
                          "2017:", "2026:01:15", "vsearch make_fixtures.py", "Photoshop 3.0"]
    static let rights = ["Jane Example", "© 2026 Example Shop"]

    static func contains(_ haystack: [UInt8], _ needle: String) -> Bool {
        let bytes = Array(needle.utf8)
        guard haystack.count >= bytes.count else { return false }
        return (0...(haystack.count - bytes.count)).contains { start in haystack[start..<(start + bytes.count)].elementsEqual(bytes) }
    }

    /// Runs the thumbnail job on one fixture and returns its outputs' bytes.
    static func thumbnails(of file: String, format: ThumbnailBatch.OutputFormat, metadata: MetadataPolicy = .none) throws -> [[UInt8]] {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("vsearch-metadata-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: output) }
        var configuration = ThumbnailBatch.Configuration()
        configuration.rule = ThumbnailRule(sizes: [100, 80], fit: .max)
        configuration.format = format
        configuration.metadata = metadata
        configuration.jobs = 1
        let summary = try ThumbnailBatch(input: directory + "/" + file, output: output, configuration: configuration).run()
        #expect(summary.failed == 0 && summary.thumbnailsWritten == 2, "\(summary.results)")
        return try summary.results.flatMap(\.thumbnails).map { try FileIO.read(output + "/" + $0.path) }
    }

    @Test("thumbnails in every format carry none of the source's metadata",
          arguments: sources, [ThumbnailBatch.OutputFormat.same, .jpeg, .png, .webp, .avif])
    func thumbnailsAreClean(source: String, format: ThumbnailBatch.OutputFormat) throws {
        for bytes in try Self.thumbnails(of: source, format: format) {
            for secret in Self.secrets + Self.rights { #expect(!Self.contains(bytes, secret), "\(secret) leaked") }
            #expect(!Self.contains(bytes, "Exif") && !Self.contains(bytes, "eXIf") && !Self.contains(bytes, "EXIF"))
        }
    }

    @Test("a prepared upload is JFIF and image data only: no APP1, APP13 or COM segment", arguments: sources)
    func uploadsAreClean(source: String) throws {
        let prepared = try UploadPreparation.prepare(FileIO.read(Self.directory + "/" + source), source: source)
        for secret in Self.secrets + Self.rights { #expect(!Self.contains(prepared.jpeg, secret), "\(secret) leaked") }
        prepared.jpeg.withUnsafeBytes { raw in
            JPEGSegments.forEach(in: raw) { marker, _ in
                #expect(marker == 0xE0 || !(0xE1...0xEF).contains(marker) && marker != 0xFE, "segment FF\(String(marker, radix: 16))")
                return true
            }
        }
    }

    @Test("orientation is applied to the pixels, never copied: an orientation-6 source gives upright thumbnails")
    func orientationApplied() throws {
        let header = try ImageDecoder.readHeader(FileIO.read(Self.directory + "/exif_gps_xmp.jpg"), source: "jpg")
        #expect(header.orientation == .right && header.size.height > header.size.width)
        for bytes in try Self.thumbnails(of: "exif_gps_xmp.jpg", format: .jpeg, metadata: .copyright) {
            let thumbnail = try ImageDecoder.readHeader(bytes, source: "thumbnail")
            #expect(thumbnail.orientation == .up && thumbnail.size.height > thumbnail.size.width)
        }
    }

    @Test("--keep-metadata copyright keeps exactly Artist and Copyright", arguments: sources, [ThumbnailBatch.OutputFormat.jpeg, .png, .webp, .avif])
    func copyrightKept(source: String, format: ThumbnailBatch.OutputFormat) throws {
        for bytes in try Self.thumbnails(of: source, format: format, metadata: .copyright) {
            for secret in Self.secrets { #expect(!Self.contains(bytes, secret), "\(secret) leaked") }
            let decoded = try ImageDecoder.decode(bytes, source: "thumbnail")
            #expect(decoded.metadata == ImageMetadata(artist: "Jane Example", copyright: "© 2026 Example Shop"))
        }
    }

    @Test("the EXIF writer's block reads back and holds nothing but the two tags")
    func exifWriter() throws {
        let long = String(repeating: "x", count: 300)
        let tiff = try #require(EXIFWriter.tiff(for: ImageMetadata(artist: "A", copyright: long)))
        let fields = tiff.withUnsafeBytes { EXIFReader.fields(inTIFF: $0) }
        #expect(fields == EXIFReader.Fields(orientation: nil, artist: "A", copyright: long))
        #expect(tiff.count == 8 + 2 + 2 * 12 + 4 + 301)
        #expect(EXIFWriter.tiff(for: .none) == nil)
    }
}
