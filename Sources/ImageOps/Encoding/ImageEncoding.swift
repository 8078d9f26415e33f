/// An encoder for one format. Implementations are in ``ImageEncoders``.
public protocol ImageEncoding: Sendable, Hashable {
    /// The format written.
    var format: ImageFormat { get }
    /// Encodes the pixels into a complete file that embeds `metadata` (an ICC
    /// profile and a rights notice) and nothing else.
    /// - Throws: ``ImageOpsError/encodingFailed(format:reason:)``.
    func encode(_ image: PixelBuffer, metadata: OutputMetadata) throws(ImageOpsError) -> [UInt8]
}

extension ImageEncoding {
    /// Encodes the pixels alone: sRGB, no metadata at all.
    public func encode(_ image: PixelBuffer) throws(ImageOpsError) -> [UInt8] {
        try encode(image, metadata: .none)
    }
}

/// Namespace for the concrete encoders.
public enum ImageEncoders {}

/// JPEG quality as the ViSearch API expresses it: a fraction in 0...1.
///
/// libjpeg takes an integer 1...100. The mapping is
/// `clamp(round(fraction × 100), 1, 100)`, rounding halves up and computed
/// in decimal so that 0.985 maps to 99 (not 98 through binary floating-point
/// error). So 0.97 → 97, 0.985 → 99, 0.85 → 85, 0 → 1, 1 → 100.
///
/// ```swift
/// let quality = try JPEGQuality(0.97)
/// quality.libjpegValue // 97
/// ```
public struct JPEGQuality: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The quality in 0...1.
    public let fraction: Double

    /// Creates a quality from a fraction in 0...1.
    /// - Throws: ``ImageOpsError/invalidParameter(name:reason:)`` outside 0...1 or for NaN.
    public init(_ fraction: Double) throws(ImageOpsError) {
        guard fraction.isFinite, (0...1).contains(fraction) else {
            throw .invalidParameter(name: "quality", reason: "\(fraction) is not in 0...1 (write 0.85 for libjpeg quality 85)")
        }
        self.fraction = fraction
    }

    /// Parses a quality given either as a fraction (`0.85`) or, for values
    /// above 1, as a libjpeg percentage (`85`, up to 100).
    /// - Throws: ``ImageOpsError/invalidParameter(name:reason:)``.
    public init(parsing text: String) throws(ImageOpsError) {
        guard let value = Double(text), value.isFinite, value >= 0 else {
            throw .invalidParameter(name: "quality", reason: "\"\(text)\" is not a number in 0...1 or 2...100")
        }
        if value <= 1 {
            try self.init(value)
        } else if value < 2 {
            // 1.5 could mean 0.015 or a typo for 0.15 or 15: refuse rather than guess.
            throw .invalidParameter(name: "quality", reason: "\(text) is ambiguous: give a fraction in 0...1 (0.85) or a percentage in 2...100 (85)")
        } else if value <= 100 {
            try self.init(value / 100)
        } else {
            throw .invalidParameter(name: "quality", reason: "\(text) is above 100")
        }
    }

    /// The libjpeg quality, 1...100.
    public var libjpegValue: Int {
        // Round the fraction to 1e-6 first so 0.985 (stored as 0.98499999...) maps to 99.
        let micro = (fraction * 1_000_000).rounded()
        let percent = (micro / 10_000).rounded(.toNearestOrAwayFromZero)
        return Swift.min(100, Swift.max(1, Int(percent)))
    }

    /// The upload default of the ViSearch SDKs: 0.97.
    public static let uploadStandard = JPEGQuality(unchecked: 0.97)
    /// The ViSearch SDKs' high-quality upload setting: 0.985.
    public static let uploadHigh = JPEGQuality(unchecked: 0.985)
    /// What libvips, Pillow and ImageMagick users typically pick for thumbnails: 0.85.
    public static let thumbnail = JPEGQuality(unchecked: 0.85)

    init(unchecked fraction: Double) { self.fraction = fraction }

    /// The fraction, e.g. `0.97`.
    public var description: String { "\(fraction)" }
}
