import Testing
import ImageOps

/// What a build reads and writes follows its package traits; the toolkit's default traits turn every codec on.
@Suite("ImageFormat")
struct ImageFormatTests {
    @Test("formats are recognised from their magic bytes")
    func sniffing() {
        #expect(ImageFormat(sniffing: [0xFF, 0xD8, 0xFF, 0xE0]) == .jpeg)
        #expect(ImageFormat(sniffing: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) == .png)
        #expect(ImageFormat(sniffing: Array("GIF89a".utf8)) == .gif)
        #expect(ImageFormat(sniffing: Array("RIFF\0\0\0\0WEBPVP8 ".utf8)) == .webp)
        #expect(ImageFormat(sniffing: Array("hello".utf8)) == nil)
        #expect(ImageFormat(sniffing: []) == nil)
    }

    @Test func theDefaultTraitsReadAndWriteEveryFormatVsearchKnows() {
        #expect(ImageFormat.readable == [.jpeg, .png, .webp, .heif, .avif, .gif])
        #expect(ImageFormat.allCases.filter(\.isWritable) == [.jpeg, .png, .webp, .avif])
        #expect(!ImageFormat.bmp.isSupported && !ImageFormat.tiff.isSupported)
        #expect(ImageFormat.readableExtensions == ["avif", "gif", "heic", "heif", "jfif", "jpe", "jpeg", "jpg", "png", "webp"])
    }

    @Test func eachOptionalCodecIsNamedByItsPackageTrait() {
        #expect(ImageFormat.webp.packageTrait == "WebP" && ImageFormat.heif.packageTrait == "HEIF")
        #expect(ImageFormat.avif.packageTrait == "AVIF" && ImageFormat.gif.packageTrait == "GIF")
        // JPEG and PNG are always in; BMP and TIFF are never read, so no trait would add them.
        #expect([ImageFormat.jpeg, .png, .bmp, .tiff].allSatisfy { $0.packageTrait == nil })
    }

    @Test func aFormatNeverReadSaysConvertItWithoutNamingATrait() {
        let message = ImageOpsError.unsupportedFormat(source: "scan.bmp", format: .bmp).description
        #expect(message == "scan.bmp: unsupported format BMP; vsearch reads JPEG, PNG, WebP, HEIC/HEIF, AVIF and GIF — convert it first")
    }

    @Test func thumbnailFormatsAreTheSourcesOwnWhereThisBuildWritesThem() {
        let encoders = ThumbnailEncoders()
        #expect(encoders.fileFormat(for: .same, source: .webp) == .webp)
        #expect(encoders.fileFormat(for: .same, source: .avif) == .avif)
        #expect(encoders.fileFormat(for: .same, source: .heif) == .jpeg)
        #expect(encoders.fileFormat(for: .same, source: .gif) == .png)
        #expect(encoders.fileFormat(for: .auto, source: .jpeg) == .webp)
    }
}
