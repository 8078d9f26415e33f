/// How strictly a decoder treats problems the codec can recover from.
///
/// Modelled on libvips' `fail_on`: ``strict`` stops at the first warning (a
/// truncated JPEG is an error), ``lenient`` keeps the recovered image and
/// reports the warnings in ``DecodedImage/warnings``.
public enum FailurePolicy: String, Sendable, Hashable, Codable {
    /// Any codec warning is an error. The default.
    case strict
    /// Codec warnings are collected and the recovered image returned; errors still throw.
    case lenient
}

/// Options for decoding. Every property has a documented default.
///
/// ```swift
/// var options = DecodingOptions()
/// options.minimumSize = PixelSize(width: 512, height: 512) // shrink-on-load
/// let image = try ImageDecoder.decode(bytes, source: "upload", options: options)
/// ```
public struct DecodingOptions: Sendable, Hashable {
    /// When set, the decoder may return any size that is at least this large
    /// in both dimensions (as displayed, after orientation) instead of the
    /// full size. JPEG uses this to decode at a DCT scale of 1/2, 1/4 or 1/8,
    /// the single biggest speed lever when the caller will downscale anyway.
    /// `nil` (full size) by default.
    public var minimumSize: PixelSize?
    /// Whether EXIF orientation is applied so the result is upright. `true` by default.
    public var appliesOrientation: Bool
    /// How warnings are treated. ``FailurePolicy/strict`` by default.
    public var failurePolicy: FailurePolicy
    /// Limits checked before allocating pixels. ``ImageLimits/default`` by default.
    public var limits: ImageLimits
    /// What happens to an embedded colour profile. ``ColorHandling/convertToSRGB`` by default.
    public var colorHandling: ColorHandling
    /// With ``ColorHandling/convertToSRGB``, leave an RGB source's pixels in
    /// its profile and name the profile in ``DecodedImage/pendingConversion``,
    /// for a caller that reduces the image first and converts the smaller
    /// result (``PixelBuffer/convertedToSRGB(from:)``) — what the thumbnail
    /// and upload jobs do (issue 28). `false` by default: pixels come out sRGB.
    public var defersColorConversion = false

    /// Creates options; every argument has the documented default.
    public init(minimumSize: PixelSize? = nil, appliesOrientation: Bool = true,
                failurePolicy: FailurePolicy = .strict, limits: ImageLimits = .default,
                colorHandling: ColorHandling = .convertToSRGB) {
        self.minimumSize = minimumSize
        self.appliesOrientation = appliesOrientation
        self.failurePolicy = failurePolicy
        self.limits = limits
        self.colorHandling = colorHandling
    }
}

/// What an image header says, read without decoding pixels.
public struct ImageHeader: Sendable, Hashable, Codable {
    /// The format, from the magic bytes.
    public var format: ImageFormat
    /// The stored size, before orientation.
    public var storedSize: PixelSize
    /// The EXIF orientation (``Orientation/up`` when absent).
    public var orientation: Orientation
    /// Whether the image has an alpha channel (including PNG tRNS transparency).
    public var hasAlpha: Bool
    /// For an animation (an animated WebP): its frames and what decoding its
    /// first frame holds in memory — more than the canvas, and never shrunk
    /// on load. Nil for a still image.
    public var animation: Animation? = nil

    /// The size as displayed, after orientation.
    public var size: PixelSize { orientation.displayedSize(of: storedSize) }
}

/// A decoded image and what the decoder knows about its source.
public struct DecodedImage: Sendable, Hashable {
    /// The pixels, upright unless ``DecodingOptions/appliesOrientation`` was false.
    public var pixels: PixelBuffer
    /// The header of the source.
    public var header: ImageHeader
    /// Recovered-from problems (with ``FailurePolicy/lenient``) and colour
    /// profiles that could not be applied (always a warning, never an error).
    public var warnings: [String]
    /// The ICC profile the pixels are in, or `nil` for sRGB. Only set with
    /// ``ColorHandling/keepSourceProfile``; converted pixels are sRGB.
    public var colorProfile: ColorProfile? = nil
    /// With ``DecodingOptions/defersColorConversion``: the profile the pixels
    /// are still in, to be converted to sRGB by the caller (after resizing),
    /// or `nil` when they are sRGB already.
    public var pendingConversion: ColorProfile? = nil
    /// The source's rights notice (EXIF Artist and Copyright), for
    /// ``MetadataPolicy/copyright``.
    public var metadata: ImageMetadata = .none
}

/// A decoder for one format. Implementations are in ``ImageDecoders``.
public protocol ImageDecoding: Sendable {
    /// The format this decoder reads.
    var format: ImageFormat { get }
    /// Reads the header only: no pixel memory is allocated.
    /// - Parameter source: names the input in errors.
    func readHeader(_ bytes: UnsafeRawBufferPointer, source: String) throws(ImageOpsError) -> ImageHeader
    /// Decodes pixels after checking the header against `options.limits`.
    func decode(_ bytes: UnsafeRawBufferPointer, source: String, options: DecodingOptions) throws(ImageOpsError) -> DecodedImage
}

/// Namespace for the concrete decoders.
public enum ImageDecoders {}
