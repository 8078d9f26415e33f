import ImageOps

/// `png-roundtrip`: ``ImageEncoders/PNG`` and ``ImageDecoders/PNG`` (CPNGCodec on libdeflate)
/// together. The input describes a small image — size, alpha, compression level and row filter
/// from its first bytes, pixels from the rest — which is encoded and decoded again through
/// ``ImageDecoder`` (format sniffing); the decoded pixels must be the ones encoded.
///
/// Input layout:
/// - byte 0: width − 1 (mod 64), so 1...64;
/// - byte 1: height − 1 (mod 64), so 1...64;
/// - byte 2: bit 0 `hasAlpha`; the bits above pick the filter from ``ImageEncoders/PNG/Filter/allCases``;
/// - byte 3: the libdeflate level (mod 13), so 0...12;
/// - the rest: RGBA bytes, repeated to fill the image (all zero when there are none). A missing
///   header byte counts as 0.
///
/// An opaque image keeps the input's bytes in its fourth channel: the encoder writes RGB and must
/// drop them, and the decoded alpha must be 255.
enum PNGRoundTripTarget {
    /// Bytes read before the pixels.
    static let headerLength = 4
    /// The largest side, in pixels.
    static let maximumSide = 64

    /// The harness.
    static let target = FuzzTarget(
        name: "png-roundtrip",
        summary: "ImageEncoders.PNG(compressionLevel:filter:).encode then ImageDecoder.decode of a ≤64×64 image from the input; pixels must match",
        maximumInputLength: headerLength + maximumSide * maximumSide * PixelBuffer.channels,
        timeoutSeconds: 10,
        seedGlobs: [],
        run: { input in run(Array(input)) }
    )

    /// The image, level and filter an input describes.
    static func image(from input: [UInt8]) -> (image: PixelBuffer, level: Int, filter: ImageEncoders.PNG.Filter) {
        func header(_ index: Int) -> Int { index < input.count ? Int(input[index]) : 0 }
        let width = header(0) % maximumSide + 1
        let height = header(1) % maximumSide + 1
        let hasAlpha = header(2) & 1 == 1
        let filters = ImageEncoders.PNG.Filter.allCases
        let filter = filters[(header(2) >> 1) % filters.count]
        let level = header(3) % 13
        let pixels = input.count > headerLength ? Array(input[headerLength...]) : []
        let count = width * height * PixelBuffer.channels
        let bytes = pixels.isEmpty
            ? [UInt8](repeating: 0, count: count)
            : (0..<count).map { pixels[$0 % pixels.count] }
        return (PixelBuffer(width: width, height: height, hasAlpha: hasAlpha, bytes: bytes), level, filter)
    }

    /// Encodes the input's image, decodes it again, and compares.
    static func run(_ input: [UInt8]) {
        let (image, level, filter) = image(from: input)
        let what = "\(image.width)×\(image.height) hasAlpha \(image.hasAlpha), level \(level), filter \(filter)"
        let encoded: [UInt8]
        do { encoded = try ImageEncoders.PNG(compressionLevel: level, filter: filter).encode(image) } catch {
            fatalError("invariant broken: PNG encoding failed for \(what): \(error)")
        }
        let decoded: DecodedImage
        do {
            decoded = try ImageDecoder.decode(encoded, source: "fuzz round trip",
                                              options: DecodingOptions(limits: ImageDecoderHarness.limits))
        } catch {
            fatalError("invariant broken: the encoder's PNG (\(encoded.count) bytes) does not decode for \(what): \(error)")
        }
        invariant(decoded.header.format == .png, "the encoder's output decoded as \(decoded.header.format) for \(what)")
        let pixels = decoded.pixels
        invariant(pixels.width == image.width && pixels.height == image.height,
                  "decoded \(pixels.width)×\(pixels.height) for \(what)")
        invariant(pixels.hasAlpha == image.hasAlpha, "decoded hasAlpha \(pixels.hasAlpha) for \(what)")
        invariant(pixels.bytes.count == image.bytes.count, "decoded \(pixels.bytes.count) bytes for \(what)")
        for index in image.bytes.indices {
            let expected = image.hasAlpha || index % PixelBuffer.channels != 3 ? image.bytes[index] : 255
            if pixels.bytes[index] != expected {
                let pixel = index / PixelBuffer.channels
                invariant(false, "byte \(index % PixelBuffer.channels) of pixel (\(pixel % image.width), \(pixel / image.width)) "
                              + "is \(pixels.bytes[index]), was \(expected), for \(what)")
            }
        }
    }
}
