import Foundation
import Testing
@testable import ImageOps

/// Colour profiles are applied: every tagged fixture of `Tests/Fixtures/colour/README.tsv`
/// (made with Little CMS from real profiles by `make_fixtures.py`) decodes to
/// what Pillow + Little CMS make of the same file, converted to sRGB
/// (relative colorimetric, black point compensation).
@Suite("Colour profiles → sRGB")
struct ColorConversionTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var file: String
        var expected: String
        var untaggedMean: Double
        var testDescription: String { file }
    }

    static let directory = Fixtures.root + "/colour"

    static let cases: [Case] = {
        guard let text = try? String(contentsOfFile: directory + "/README.tsv", encoding: .utf8) else { return [] }
        return text.split(separator: "\n").dropFirst().compactMap { line in
            let columns = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard columns.count >= 5, let mean = Double(columns[4]) else { return nil }
            return Case(file: columns[0], expected: columns[3], untaggedMean: mean)
        }
    }()

    /// Mean and largest absolute difference over the RGB channels.
    static func difference(_ a: PixelBuffer, _ b: PixelBuffer) -> (mean: Double, max: Int) {
        precondition(a.size == b.size)
        var total = 0, largest = 0
        for index in a.bytes.indices where index % 4 != 3 {
            let delta = abs(Int(a.bytes[index]) - Int(b.bytes[index]))
            total += delta
            largest = Swift.max(largest, delta)
        }
        return (Double(total) / Double(a.width * a.height * 3), largest)
    }

    static func decode(_ file: String, _ handling: ColorHandling = .convertToSRGB) throws -> DecodedImage {
        try ImageDecoder.decode(fileAt: directory + "/" + file, options: DecodingOptions(colorHandling: handling))
    }

    @Test("the table lists the fixtures")
    func tableIsComplete() {
        #expect(Self.cases.count >= 19)
    }

    /// Tolerance: mean |Δ| ≤ 0.6 and max |Δ| ≤ 8 levels of 255. Both sides
    /// use Little CMS with the same intent and flags, but its 8-bit optimised
    /// paths (matrix-shaper, CLUT interpolation) differ in rounding between
    /// versions and pixel layouts, and the HEIC decoders' YCbCr conversion
    /// differ; ignoring the profile is 2.7–19 levels off on average (the
    /// table's untagged column), so the bound separates the two.
    @Test("a tagged file decodes to its colour-managed original", arguments: cases)
    func matchesColorManagedOriginal(_ testCase: Case) throws {
        let decoded = try Self.decode(testCase.file)
        let expected = try Self.decode(testCase.expected)
        let (mean, largest) = Self.difference(decoded.pixels, expected.pixels)
        print("colour \(testCase.file): mean \(mean) max \(largest) (untagged mean \(testCase.untaggedMean))")
        #expect(mean <= 0.6 && largest <= 8, "mean \(mean), max \(largest)")
        #expect(decoded.colorProfile == nil, "converted pixels are sRGB")
    }

    @Test("deferred conversion: the pixels stay in the profile, which is named; converting them later gives the same pixels",
          arguments: cases.filter { !$0.file.contains("gray") && !$0.file.contains("cmyk") })
    func deferredConversion(_ testCase: Case) throws {
        var options = DecodingOptions()
        options.defersColorConversion = true
        let deferred = try ImageDecoder.decode(fileAt: Self.directory + "/" + testCase.file, options: options)
        let now = try Self.decode(testCase.file)
        let later = deferred.pixels.convertedToSRGB(from: deferred.pendingConversion)
        #expect(later == now.pixels, "converting later is the same transform")
        if deferred.pendingConversion != nil {
            #expect(deferred.pixels != now.pixels, "the pixels were left in the source profile")
        }
        #expect(deferred.colorProfile == nil)
    }

    @Test("thumbnails and upload preparation convert after resizing: within 2 levels of converting at the decoded size",
          arguments: ["jpeg_prophoto.jpg", "jpeg_adobergb.jpg", "jpeg_swapped_red_green.jpg"])
    func convertAfterResize(file: String) throws {
        let bytes = try FileIO.read(Self.directory + "/" + file)
        let prepared = try UploadPreparation.prepare(bytes, source: file, settings: UploadSettings(maxSide: 64, quality: JPEGQuality(1)))
        // The same decode (shrink-on-load to the same scale), converted at the decoded size instead.
        let atDecodedSize = try ImageDecoder.decode(bytes, source: file, options: DecodingOptions(minimumSize: prepared.size))
        let reference = Resampler.resample(atDecodedSize.pixels, to: prepared.size)
        let decodedJPEG = try ImageDecoder.decode(prepared.jpeg, source: "prepared").pixels
        let (mean, _) = Self.difference(decodedJPEG, reference)
        #expect(mean <= 2.0, "mean \(mean)")
    }

    @Test("a profile that swaps red and green is applied (ignoring it would be ~19 levels off)")
    func swappedChannels() throws {
        let converted = try Self.decode("jpeg_swapped_red_green.jpg").pixels
        let kept = try Self.decode("jpeg_swapped_red_green.jpg", .keepSourceProfile).pixels
        #expect(Self.difference(converted, kept).mean > 10)
    }

    @Test("sRGB-tagged and untagged files decode to the same pixels; the sRGB profile costs no conversion")
    func sRGBIsIdentity() throws {
        let tagged = try Self.decode("jpeg_srgb_tagged.jpg")
        let untouched = try Self.decode("jpeg_srgb_tagged.jpg", .keepSourceProfile)
        #expect(tagged.pixels == untouched.pixels)
        let profile = try #require(untouched.colorProfile)
        guard case .identity = SRGBConversion.plan(for: profile, layout: .rgba8) else {
            Issue.record("the sRGB profile should be recognised as sRGB")
            return
        }
    }

    @Test("keeping the profile keeps the source's pixels and reports the embedded profile")
    func keepSourceProfile() throws {
        let kept = try Self.decode("jpeg_prophoto.jpg", .keepSourceProfile)
        let profile = try #require(kept.colorProfile)
        #expect(profile.header?.colorSpace == .rgb)
        #expect(profile.name?.contains("ProPhoto") == true, "\(profile.name ?? "no name")")
        let bytes = try FileIO.read(Self.directory + "/jpeg_prophoto.jpg")
        let embedded = bytes.withUnsafeBytes { JPEGSegments.iccProfile(in: $0) }
        #expect(try embedded?.get() == profile.iccData)
    }

    @Test("a profile over 64 KB spread over three APP2 segments is joined in order")
    func multiSegmentProfile() throws {
        let bytes = try FileIO.read(Self.directory + "/jpeg_cmyk_swop.jpg")
        var segments = 0
        bytes.withUnsafeBytes { raw in
            JPEGSegments.forEach(in: raw) { marker, payload in
                if marker == 0xE2, payload.starts(with: JPEGSegments.iccSignature) { segments += 1 }
                return true
            }
        }
        #expect(segments == 3)
        let profile = try #require(try bytes.withUnsafeBytes { JPEGSegments.iccProfile(in: $0) }?.get())
        #expect(profile.count == 187_484)
        #expect(ICCProfileHeader(profile)?.colorSpace == .cmyk)
    }

    @Test("a broken profile is a warning and the pixels are read as sRGB", arguments: ["jpeg_icc_truncated.jpg", "jpeg_icc_garbage.jpg"])
    func brokenProfile(file: String) throws {
        let decoded = try Self.decode(file)
        #expect(decoded.warnings.contains { $0.contains("colour profile ignored") }, "\(decoded.warnings)")
        let kept = try Self.decode(file, .keepSourceProfile)
        #expect(kept.colorProfile == nil && decoded.pixels == kept.pixels)
    }

    @Test("one transform per distinct profile: the second source reuses the first's")
    func transformsAreCached() throws {
        let profile = try #require(try Self.decode("jpeg_adobergb.jpg", .keepSourceProfile).colorProfile)
        guard case .transform(let first) = SRGBConversion.plan(for: profile, layout: .rgba8),
              case .transform(let second) = SRGBConversion.plan(for: profile, layout: .rgba8) else {
            Issue.record("Adobe RGB should need a transform")
            return
        }
        #expect(first === second)
    }

    @Test("a 16-bit source is converted at 16 bits (closer than converting its 8-bit reduction)")
    func sixteenBit() throws {
        let wide = try Self.decode("png16_prophoto.png")
        let expected = try Self.decode("png16_prophoto.expected.png")
        #expect(Self.difference(wide.pixels, expected.pixels).mean <= 0.6)
    }

    @Test("an embedded profile round-trips through every encoder that writes one",
          arguments: [ImageFormat.jpeg, .png, .webp, .avif])
    func embedding(format: ImageFormat) throws {
        let kept = try Self.decode("jpeg_prophoto.jpg", .keepSourceProfile)
        let encoder: any ImageEncoding = switch format {
        case .png: ImageEncoders.PNG()
        case .webp: ImageEncoders.WebP()
        case .avif: ImageEncoders.AVIF(speed: 10)
        default: ImageEncoders.JPEG()
        }
        let small = Resampler.resample(kept.pixels, to: PixelSize(width: 64, height: 48))
        let encoded = try encoder.encode(small, metadata: OutputMetadata(colorProfile: kept.colorProfile))
        let again = try ImageDecoder.decode(encoded, source: "roundtrip", options: DecodingOptions(colorHandling: .keepSourceProfile))
        #expect(again.colorProfile == kept.colorProfile)
    }

    @Test("a large (187 KB) profile is split into APP2 segments and joined back")
    func largeProfileRoundTrip() throws {
        let bytes = try FileIO.read(Self.directory + "/jpeg_cmyk_swop.jpg")
        let profile = try #require(try bytes.withUnsafeBytes { JPEGSegments.iccProfile(in: $0) }?.get())
        let jpeg = try ImageEncoders.JPEG().encode(Fixtures.quadrants(width: 16, height: 16),
                                                    metadata: OutputMetadata(colorProfile: ColorProfile(iccData: profile)))
        #expect(try jpeg.withUnsafeBytes { JPEGSegments.iccProfile(in: $0) }?.get() == profile)
    }

    @Test("primaries and a transfer function make a profile (Display P3) that Little CMS converts")
    func parametricProfile() throws {
        let p3 = try #require(RGBColorSpace(primaries: .displayP3, transfer: .sRGB).profile)
        #expect(p3.header?.colorSpace == .rgb)
        guard case .transform = SRGBConversion.plan(for: p3, layout: .rgba8) else {
            Issue.record("P3 is not sRGB")
            return
        }
        let sRGB = try #require(RGBColorSpace(primaries: .bt709, transfer: .sRGB).profile)
        guard case .identity = SRGBConversion.plan(for: sRGB, layout: .rgba8) else {
            Issue.record("sRGB made from primaries should be recognised as sRGB")
            return
        }
    }
}
