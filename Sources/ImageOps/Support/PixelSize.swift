/// A width and height in pixels.
///
/// ```swift
/// let size = PixelSize(width: 1600, height: 1200)
/// size.fitting(inside: 512) // 512×384
/// ```
public struct PixelSize: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int

    /// Creates a size.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// The longer side.
    public var maxDimension: Int { Swift.max(width, height) }

    /// The number of pixels, or `nil` when `width × height` overflows `Int`.
    public var pixelCount: Int? {
        let (product, overflow) = width.multipliedReportingOverflow(by: height)
        return overflow ? nil : product
    }

    /// The size with width and height exchanged (a quarter turn).
    public var transposed: PixelSize { PixelSize(width: height, height: width) }

    /// The largest size with this aspect ratio that fits inside `side × side`,
    /// shrinking only: a size that already fits is returned unchanged.
    ///
    /// The longer side becomes `side`; the other is rounded half up from the
    /// exact ratio and is at least 1.
    public func fitting(inside side: Int) -> PixelSize {
        fitting(inside: PixelSize(width: side, height: side))
    }

    /// The largest size with this aspect ratio that fits inside `box`, shrinking only.
    public func fitting(inside box: PixelSize) -> PixelSize {
        guard width > box.width || height > box.height, width > 0, height > 0 else { return self }
        // Compare width/box.width with height/box.height without division.
        if width * box.height >= height * box.width {
            return PixelSize(width: box.width, height: PixelSize.scaled(height, by: box.width, over: width))
        } else {
            return PixelSize(width: PixelSize.scaled(width, by: box.height, over: height), height: box.height)
        }
    }

    /// `value × numerator / denominator`, rounded half up, at least 1.
    static func scaled(_ value: Int, by numerator: Int, over denominator: Int) -> Int {
        let rounded = (2 * value * numerator + denominator) / (2 * denominator)
        return Swift.max(1, rounded)
    }

    /// `"W×H"`.
    public var description: String { "\(width)×\(height)" }
}
