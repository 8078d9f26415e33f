/// Limits checked before any pixel memory is allocated: from the file size,
/// then from the dimensions in the image header, with overflow-checked
/// arithmetic. They guard against decompression bombs (a small file that
/// declares a huge image) and oversized uploads.
///
/// The defaults allow any real photograph (a 200-megapixel phone camera
/// image is 16320×12240 = 199.8 MP — raise ``maxPixels`` for those) while
/// rejecting bombs:
/// - ``maxPixels`` 178,956,970: Pillow's own decompression-bomb error
///   threshold (twice its warning threshold), about 715 MB as RGBA.
/// - ``maxSide`` 32,767 px: room for 20000×1 strips and panoramas.
///   ImageMagick's "web-safe" policy caps sides at 8K, which rejects real
///   panoramas; the pixel limit is the one that bounds memory.
/// - ``maxInputBytes`` 128 MiB.
///
/// ```swift
/// var limits = ImageLimits.default
/// limits.maxPixels = 40_000_000
/// ```
public struct ImageLimits: Sendable, Hashable, Codable {
    /// The most pixels (width × height, as stored) an image may declare. 178,956,970 by default.
    public var maxPixels: Int
    /// The longest side an image may declare, in pixels. 32,767 by default.
    public var maxSide: Int
    /// The largest encoded input accepted, in bytes. 134,217,728 (128 MiB) by default.
    public var maxInputBytes: Int

    /// Creates limits; every argument has the documented default.
    public init(maxPixels: Int = 178_956_970, maxSide: Int = 32_767, maxInputBytes: Int = 128 * 1024 * 1024) {
        self.maxPixels = maxPixels
        self.maxSide = maxSide
        self.maxInputBytes = maxInputBytes
    }

    /// The documented defaults.
    public static let `default` = ImageLimits()

    /// Throws unless `size` (as declared by a header) is within the limits.
    public func check(_ size: PixelSize, source: String) throws(ImageOpsError) {
        guard size.width > 0, size.height > 0 else {
            throw .invalidDimensions(source: source, width: size.width, height: size.height)
        }
        if size.width > maxSide || size.height > maxSide {
            throw .limitExceeded(source: source, limit: .side(width: size.width, height: size.height, maximum: maxSide))
        }
        guard let pixels = size.pixelCount, pixels <= maxPixels else {
            throw .limitExceeded(source: source, limit: .pixels(width: size.width, height: size.height, maximum: maxPixels))
        }
    }

    /// Throws unless what `header` declares is within the limits: its stored
    /// size, and for an animation what decoding its first frame holds at once
    /// (``ImageHeader/Animation/pixelsHeld``: the canvas and the frame's buffer)
    /// against ``maxPixels``.
    public func check(_ header: ImageHeader, source: String) throws(ImageOpsError) {
        try check(header.storedSize, source: source)
        if let animation = header.animation, animation.pixelsHeld > maxPixels {
            throw .limitExceeded(source: source, limit: .animation(width: header.storedSize.width, height: header.storedSize.height,
                                                                   frames: animation.frames, pixelsHeld: animation.pixelsHeld,
                                                                   maximum: maxPixels))
        }
    }

    /// Throws unless `byteCount` is within ``maxInputBytes``.
    public func check(byteCount: Int, source: String) throws(ImageOpsError) {
        if byteCount > maxInputBytes {
            throw .limitExceeded(source: source, limit: .inputBytes(byteCount, maximum: maxInputBytes))
        }
    }
}
