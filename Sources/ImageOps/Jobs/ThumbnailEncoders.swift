/// The encoders a thumbnail job writes with, and how it picks one per source.
///
/// - ``ThumbnailBatch/OutputFormat/same``: the source's own format where
///   vsearch writes it (JPEG, PNG, WebP, AVIF); GIF sources give PNG (the
///   first frame, lossless) and HEIC sources JPEG (browsers do not show HEIC).
/// - ``ThumbnailBatch/OutputFormat/auto``: WebP for every source (every
///   current browser shows it): lossless for graphics — at most 256 distinct
///   colours, as logos, icons and drawings are, with or without alpha — and
///   lossy for photos, keeping their alpha when they have it (cut-out product
///   shots). This is what imgproxy and Cloudinary's `f_auto` do with WebP.
///
/// A build without the `WebP` or `AVIF` package trait writes JPEG where that format would be written.
public struct ThumbnailEncoders: Sendable, Hashable {
    /// JPEG outputs. Quality 0.85 by default.
    public var jpeg = ImageEncoders.JPEG(quality: .thumbnail)
    /// PNG outputs. ``ImageEncoders/PNG/init(compressionLevel:filter:)`` defaults.
    public var png = ImageEncoders.PNG()
    #if WebP
    /// Lossy WebP outputs (and the effort of lossless ones). Quality 80, effort 4 by default.
    public var webp = ImageEncoders.WebP()
    #endif
    #if AVIF
    /// AVIF outputs. Quality 50, speed 8 by default.
    public var avif = ImageEncoders.AVIF()
    #endif

    /// The default encoders.
    public init() {}

    /// The file format written for a source, known from its header alone
    /// (so output names are planned before decoding).
    public func fileFormat(for choice: ThumbnailBatch.OutputFormat, source: ImageFormat) -> ImageFormat {
        switch choice {
        case .jpeg: .jpeg
        case .png: .png
        // A format this build does not write (its package trait off) becomes JPEG.
        case .webp, .auto: ImageFormat.webp.isWritable ? .webp : .jpeg
        case .avif: ImageFormat.avif.isWritable ? .avif : .jpeg
        case .same:
            switch source {
            case .png, .gif: .png
            case .webp where ImageFormat.webp.isWritable: .webp
            case .avif where ImageFormat.avif.isWritable: .avif
            default: .jpeg
            }
        }
    }

    /// The encoder for a source, given its decoded pixels (``ThumbnailBatch/OutputFormat/auto`` looks at them).
    public func encoder(for choice: ThumbnailBatch.OutputFormat, source: ImageFormat, pixels: PixelBuffer) -> any ImageEncoding {
        switch fileFormat(for: choice, source: source) {
        case .png: return png
        #if AVIF
        case .avif: return avif
        #endif
        #if WebP
        case .webp:
            var encoder = webp
            // A lossless WebP source stays lossless under `same`; `auto` decides by content.
            if choice == .auto { encoder.isLossless = ThumbnailEncoders.looksLikeGraphics(pixels) }
            return encoder
        #endif
        default: return jpeg  // fileFormat(for:) gives JPEG for what this build does not write
        }
    }

    /// At most this many distinct colours make an image graphics rather than a photo.
    public static let graphicsColorLimit = 256

    /// Whether an image has at most ``graphicsColorLimit`` distinct colours
    /// (alpha included) on a grid of at most about 65,000 of its pixels.
    /// Photos, whose noise and gradients give thousands of colours, stop the
    /// count early.
    public static func looksLikeGraphics(_ pixels: PixelBuffer) -> Bool {
        let step = Swift.max(1, Int((Double(pixels.width * pixels.height) / 65_536).squareRoot().rounded(.up)))
        var seen = Set<UInt32>(minimumCapacity: graphicsColorLimit + 1)
        return pixels.bytes.withUnsafeBytes { raw in
            let words = raw.bindMemory(to: UInt32.self)
            for y in stride(from: 0, to: pixels.height, by: step) {
                for x in stride(from: 0, to: pixels.width, by: step) {
                    seen.insert(words[y * pixels.width + x])
                    if seen.count > graphicsColorLimit { return false }
                }
            }
            return true
        }
    }
}
