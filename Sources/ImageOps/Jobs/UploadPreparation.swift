/// How an upload is resized and compressed, as the ViSearch SDKs' "Resizing
/// Settings" describe: fit inside `maxSide × maxSide` (shrink only, aspect
/// kept, for every orientation), then re-encode as an upright JPEG.
///
/// ```swift
/// UploadSettings.standard      // 512 px, quality 0.97
/// UploadSettings.highQuality   // 1024 px, quality 0.985
/// try UploadSettings(maxSide: 800, quality: JPEGQuality(0.9))
/// ```
public struct UploadSettings: Sendable, Hashable, Codable {
    /// The largest side, 1...1024.
    public let maxSide: Int
    /// The JPEG quality.
    public let quality: JPEGQuality

    /// The SDKs' clamp on custom sizes: 1024 px.
    public static let maximumSide = 1024
    /// The default: 512 px at 0.97.
    public static let standard = UploadSettings(uncheckedSide: 512, quality: .uploadStandard)
    /// "High quality": 1024 px at 0.985.
    public static let highQuality = UploadSettings(uncheckedSide: 1024, quality: .uploadHigh)

    /// Custom settings. Sides above 1024 are clamped to 1024, as the SDKs do
    /// (and, unlike the reference SDK, the aspect ratio is kept for landscape
    /// images too).
    /// - Throws: ``ImageOpsError/invalidParameter(name:reason:)`` for a side below 1.
    public init(maxSide: Int, quality: JPEGQuality) throws(ImageOpsError) {
        guard maxSide >= 1 else { throw .invalidParameter(name: "size", reason: "\(maxSide) is below 1 pixel") }
        self.init(uncheckedSide: Swift.min(maxSide, UploadSettings.maximumSide), quality: quality)
    }

    init(uncheckedSide: Int, quality: JPEGQuality) {
        self.maxSide = uncheckedSide
        self.quality = quality
    }
}

/// What to do with a selection box when preparing an upload.
public enum BoxHandling: String, Sendable, Hashable, Codable, CaseIterable {
    /// Keep the whole image and carry the box into the prepared image's
    /// coordinates (multiplied by the resize scale, truncated) — what the
    /// ViSearch SDKs do and what the hosted service expects (it reads `box`
    /// in the pixel space of the uploaded image). The default.
    case scale
    /// Crop to the box first and upload only the crop; no box is sent.
    case crop
}

/// A prepared upload: the JPEG bytes and how they relate to the original.
public struct PreparedUpload: Sendable, Hashable {
    /// The JPEG file to upload.
    public var jpeg: [UInt8]
    /// The prepared image's size.
    public var size: PixelSize
    /// The original's size as displayed (after EXIF orientation).
    public var originalSize: PixelSize
    /// prepared / original along the longer side (1 when not resized).
    public var scale: Double
    /// The box in the prepared image's pixels, when a box was given and
    /// ``BoxHandling/scale`` was used; `nil` otherwise.
    public var box: PixelBox?
}

/// Upload preparation ("Resizing Settings" of the ViSearch guide).
///
/// Decoding uses shrink-on-load (a JPEG is decoded at the smallest DCT scale
/// that still covers the target), EXIF orientation is baked in, and the
/// result is always re-encoded as JPEG.
///
/// ```swift
/// let prepared = try UploadPreparation.prepare(bytes, source: "photo.jpg",
///                                              box: PixelBox(x1: 10, y1: 10, x2: 400, y2: 300))
/// prepared.size  // fits in 512×512
/// prepared.box   // the box in the prepared image's pixels
/// ```
public enum UploadPreparation {
    /// Prepares an encoded image (JPEG or PNG) for upload.
    /// - Parameters:
    ///   - source: names the input in errors.
    ///   - settings: size and quality. ``UploadSettings/standard`` by default.
    ///   - box: a selection box in the original's (upright) pixels, or `nil`.
    ///   - boxHandling: ``BoxHandling/scale`` by default.
    ///   - limits: checked before decoding. ``ImageLimits/default`` by default.
    /// - Throws: ``ImageOpsError``.
    /// Decoding at least `minimumSize`, with the colour conversion left for
    /// after the resample (on the prepared size's pixels, not the decoded ones).
    static func decodingOptions(minimumSize: PixelSize, limits: ImageLimits) -> DecodingOptions {
        var options = DecodingOptions(minimumSize: minimumSize, limits: limits)
        options.defersColorConversion = true
        return options
    }

    public static func prepare(_ bytes: [UInt8], source: String, settings: UploadSettings = .standard,
                               box: PixelBox? = nil, boxHandling: BoxHandling = .scale,
                               limits: ImageLimits = .default) throws(ImageOpsError) -> PreparedUpload {
        let header = try ImageDecoder.readHeader(bytes, source: source, limits: limits)
        let original = header.size
        let region = try box?.region(in: original)

        if let region, boxHandling == .crop {
            let target = region.size.fitting(inside: settings.maxSide)
            // Decode just large enough that the cropped region still covers the target.
            let minimum = PixelSize(width: ceilDiv(original.width * target.width, region.width),
                                    height: ceilDiv(original.height * target.height, region.height))
            let decoded = try ImageDecoder.decode(bytes, source: source, options: Self.decodingOptions(minimumSize: minimum, limits: limits))
            let scaleX = Double(decoded.pixels.width) / Double(original.width)
            let scaleY = Double(decoded.pixels.height) / Double(original.height)
            let x = Int(Double(region.x) * scaleX), y = Int(Double(region.y) * scaleY)
            let crop = PixelRect(x: x, y: y,
                                 width: Swift.max(1, Swift.min(decoded.pixels.width - x, Int((Double(region.width) * scaleX).rounded()))),
                                 height: Swift.max(1, Swift.min(decoded.pixels.height - y, Int((Double(region.height) * scaleY).rounded()))))
            let cropped = try ImageProcessors.Crop(crop).process(decoded.pixels)
            let resized = Resampler.resample(cropped, to: cropped.size.fitting(inside: settings.maxSide))
                .convertedToSRGB(from: decoded.pendingConversion)
            let jpeg = try ImageEncoders.JPEG(quality: settings.quality).encode(resized)
            return PreparedUpload(jpeg: jpeg, size: resized.size, originalSize: original,
                                  scale: Double(resized.size.maxDimension) / Double(region.size.maxDimension), box: nil)
        }

        let target = original.fitting(inside: settings.maxSide)
        var decoded = try ImageDecoder.decode(bytes, source: source, options: Self.decodingOptions(minimumSize: target, limits: limits))
        // Hand the resampler the only reference to the pixels, so an image with alpha is
        // premultiplied in place (a 20-MP RGBA source: one 80 MB buffer, not two).
        var pixels = PixelBuffer(width: 1, height: 1, hasAlpha: false, fill: (0, 0, 0, 255))
        swap(&pixels, &decoded.pixels)
        let resized = Resampler.resample(consume pixels, to: target).convertedToSRGB(from: decoded.pendingConversion)
        let jpeg = try ImageEncoders.JPEG(quality: settings.quality).encode(resized)
        // As the SDKs do: one scale from the longer side, coordinates truncated.
        let scale = original.width >= original.height
            ? Double(target.width) / Double(original.width)
            : Double(target.height) / Double(original.height)
        var scaledBox: PixelBox?
        if let box, let region {
            let clamped = box.isPoint ? box
                : PixelBox(x1: region.x, y1: region.y, x2: region.x + region.width, y2: region.y + region.height)
            scaledBox = clamped.scaled(by: scale)
        }
        return PreparedUpload(jpeg: jpeg, size: target, originalSize: original, scale: scale, box: scaledBox)
    }

    static func ceilDiv(_ numerator: Int, _ denominator: Int) -> Int {
        (numerator + denominator - 1) / denominator
    }
}
