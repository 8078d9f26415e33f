import ImageOps

/// What every decoder harness does with one input, given the decoder under test: read the
/// header, decode strictly at full size, decode leniently with shrink-on-load, then decode
/// through ``ImageDecoder`` (format sniffing) — all within ``limits`` — and check that every
/// image returned is consistent.
enum ImageDecoderHarness {
    /// The limits a server would set: 4096 px a side, 16 megapixels, 1 MiB of input. They keep a
    /// decompression bomb (rejected before pixels are allocated) from reading as out-of-memory.
    static let limits = ImageLimits(maxPixels: 16_000_000, maxSide: 4096, maxInputBytes: 1 << 20)

    /// The options tried on each input: strict at full size; lenient, shrinking on load to at
    /// least 64×64, without applying EXIF orientation; strict at full size keeping the source's
    /// colour profile instead of converting to sRGB.
    static let optionSets = [
        DecodingOptions(limits: limits),
        DecodingOptions(minimumSize: PixelSize(width: 64, height: 64), appliesOrientation: false,
                        failurePolicy: .lenient, limits: limits),
        DecodingOptions(limits: limits, colorHandling: .keepSourceProfile),
    ]

    /// Runs `decoder` on `input` in every way above.
    static func run(_ input: UnsafeRawBufferPointer, with decoder: some ImageDecoding) {
        let source = "fuzz input"
        _ = try? decoder.readHeader(input, source: source)
        for options in optionSets {
            if let image = try? decoder.decode(input, source: source, options: options) {
                check(image, options: options)
            }
        }
        let bytes = Array(input)
        _ = try? ImageDecoder.readHeader(bytes, source: source, limits: limits)
        if let image = try? ImageDecoder.decode(input, source: source, options: optionSets[0]) {
            check(image, options: optionSets[0])
        }
    }

    /// What a decoded image must satisfy: four bytes a pixel, a stored size within the limits,
    /// (at full size, oriented) pixels the size the header reports, and a colour profile only
    /// when asked to keep one, and then an RGB profile with a readable header.
    static func check(_ image: DecodedImage, options: DecodingOptions) {
        let pixels = image.pixels
        invariant(pixels.width > 0 && pixels.height > 0, "empty image \(pixels.width)×\(pixels.height)")
        invariant(pixels.bytes.count == pixels.width * pixels.height * 4,
                  "\(pixels.bytes.count) bytes for \(pixels.width)×\(pixels.height)")
        let stored = image.header.storedSize
        invariant(stored.width <= limits.maxSide && stored.height <= limits.maxSide, "stored size \(stored) over the limits")
        invariant(pixels.width <= limits.maxSide && pixels.height <= limits.maxSide, "pixels \(pixels.size) over the limits")
        if options.minimumSize == nil && options.appliesOrientation {
            invariant(pixels.size == image.header.size, "pixels \(pixels.size), header says \(image.header.size)")
        }
        if let profile = image.colorProfile {
            invariant(options.colorHandling == .keepSourceProfile, "a colour profile kept although converting to sRGB")
            invariant(profile.header?.colorSpace == .rgb, "kept a profile whose header is \(String(describing: profile.header))")
        }
    }
}
