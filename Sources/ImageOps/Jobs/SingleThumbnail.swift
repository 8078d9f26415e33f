/// One thumbnail of one image, on demand: what the thumbnail batch job makes
/// for one size, for a server that makes thumbnails when they are first asked
/// for (`vsearch serve`'s `/images/{im_name}?size=N`).
///
/// The same rule, resampling and encoders as ``ThumbnailBatch``: the size is
/// ``ThumbnailRule`` applied to the displayed (EXIF-oriented) size; the
/// output format is the source's where vsearch writes it (JPEG, PNG, WebP,
/// AVIF), PNG for GIF and JPEG for HEIC; pixels are sRGB and carry no metadata.
///
/// ```swift
/// let maker = SingleThumbnail()
/// if let thumbnail = try maker.make(from: bytes, source: "shoe.jpg", size: 400) {
///     // thumbnail.bytes: a JPEG whose longer side is 400 px
/// }   // nil: the rule makes no 400 px thumbnail of this image (it is not larger): serve the original
/// ```
public struct SingleThumbnail: Sendable, Hashable {
    /// The rule deciding which sizes exist. ``ThumbnailRule/rezolve`` by default.
    public var rule: ThumbnailRule = .rezolve
    /// The encoders, as the batch job's (``ThumbnailEncoders``); the format is
    /// the batch job's ``ThumbnailBatch/OutputFormat/same``.
    public var encoders = ThumbnailEncoders()
    /// The resampling filter. Lanczos-3 by default.
    public var filter: ResamplingFilter = .lanczos3
    /// Decoding limits (pixels, bytes).
    public var limits: ImageLimits = .default

    /// A made thumbnail.
    public struct Thumbnail: Sendable, Hashable {
        /// The encoded image.
        public var bytes: [UInt8]
        /// Its pixel size.
        public var size: PixelSize
        /// Its format (the source's where vsearch writes it; GIF → PNG, HEIC → JPEG).
        public var format: ImageFormat
    }

    public init() {}

    /// The thumbnail of `bytes` whose maximum dimension (or width, per the
    /// rule's fit) is `size`, or nil when the rule makes none (the image is
    /// not larger than `size`).
    /// - Parameters:
    ///   - source: names the image in errors.
    ///   - size: one of ``ThumbnailRule/sizes``; another size is ``ImageOpsError/invalidParameter(name:reason:)``.
    /// - Throws: ``ImageOpsError`` for an unreadable, unsupported or too large image.
    public func make(from bytes: [UInt8], source: String, size: Int) throws(ImageOpsError) -> Thumbnail? {
        guard let (header, target) = try plan(bytes, source: source, size: size) else { return nil }
        var options = DecodingOptions(minimumSize: target, limits: limits)
        options.defersColorConversion = true  // converted after the resample, on fewer pixels
        let decoded = try ImageDecoder.decode(bytes, source: source, options: options)
        let pixels = decoded.pixels
        let encoder = encoders.encoder(for: .same, source: header.format, pixels: pixels)
        let resized = Resampler.resample(consume pixels, to: target, filter: filter).convertedToSRGB(from: decoded.pendingConversion)
        return Thumbnail(bytes: try encoder.encode(resized), size: target, format: encoder.format)
    }

    /// Pixels decoding `bytes` for a thumbnail of `size` produces (after
    /// shrink-on-load), known from the header; 0 when the rule makes none.
    /// - Throws: ``ImageOpsError`` as ``make(from:source:size:)``.
    public func decodedPixelCount(of bytes: [UInt8], source: String, size: Int) throws(ImageOpsError) -> Int {
        guard let (header, target) = try plan(bytes, source: source, size: size) else { return 0 }
        return ShrinkOnLoad.decodedPixelCount(of: header, minimumSize: target)
    }

    /// The header (limits checked) and the thumbnail's size, or nil when the image is not larger than `size`.
    func plan(_ bytes: [UInt8], source: String, size: Int) throws(ImageOpsError) -> (header: ImageHeader, target: PixelSize)? {
        guard let position = rule.sizes.firstIndex(of: size) else {
            throw .invalidParameter(name: "size", reason: "\(size) is not a thumbnail size of the rule (\(rule.sizes.map(String.init).joined(separator: ", ")))")
        }
        let header = try ImageDecoder.readHeader(bytes, source: source, limits: limits)
        let planned = rule.thumbnails(for: header.size)
        // The rule's sizes the image gets are a prefix of rule.sizes.
        guard position < planned.count else { return nil }
        return (header, planned[position])
    }
}
