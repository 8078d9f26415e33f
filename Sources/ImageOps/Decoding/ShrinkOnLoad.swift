/// Shrink-on-load: decoding straight to a fraction of the stored size, as
/// libjpeg-turbo's DCT scaling (1/2, 1/4, 1/8) and libwebp's scaler do.
///
/// One home for the rule, so the decoders and whoever budgets their cost
/// before decoding (`vsearch serve`'s pixel budget) agree on the size:
///
/// ```swift
/// let header = try ImageDecoder.readHeader(bytes, source: "upload")
/// let pixels = ShrinkOnLoad.decodedPixelCount(of: header, minimumSize: PixelSize(width: 256, height: 256))
/// ```
public enum ShrinkOnLoad {
    /// The denominators a format's decoder can shrink by while decoding (`[1]` when it cannot).
    public static func denominators(for format: ImageFormat) -> [Int] {
        switch format {
        case .jpeg: [1, 2, 4, 8]
        case .webp: [1, 2, 4, 8]
        default: [1]
        }
    }

    /// The largest denominator whose output still covers `minimum` (in the
    /// stored orientation), or 1.
    public static func denominator(for stored: PixelSize, minimum: PixelSize?, candidates: [Int]) -> Int {
        guard let minimum else { return 1 }
        var chosen = 1
        for candidate in candidates
        where scaled(stored.width, candidate) >= minimum.width && scaled(stored.height, candidate) >= minimum.height {
            chosen = max(chosen, candidate)
        }
        return chosen
    }

    /// A dimension divided by `denominator`, rounded up (libjpeg-turbo's rule).
    public static func scaled(_ dimension: Int, _ denominator: Int) -> Int {
        (dimension + denominator - 1) / denominator
    }

    /// How many pixels decoding `header` with `minimumSize` (displayed
    /// orientation) produces: what a decode costs in memory, known before it starts.
    /// An animation is charged what decoding its first frame holds at once
    /// (``ImageHeader/Animation/pixelsHeld``): it is never shrunk.
    public static func decodedPixelCount(of header: ImageHeader, minimumSize: PixelSize?) -> Int {
        if let animation = header.animation { return animation.pixelsHeld }
        let minimum = minimumSize.map { header.orientation.swapsDimensions ? $0.transposed : $0 }
        let denominator = denominator(for: header.storedSize, minimum: minimum, candidates: denominators(for: header.format))
        let width = scaled(header.storedSize.width, denominator), height = scaled(header.storedSize.height, denominator)
        return width.multipliedReportingOverflow(by: height).overflow ? Int.max : width * height
    }

    /// What decoding `bytes` (whose header is `header`) to `minimumSize`
    /// holds in memory at its peak, known before it starts: the decoded
    /// pixels (4 bytes each) and, for a progressive JPEG, the whole image's
    /// DCT coefficients, which its decoder keeps whatever the output scale
    /// (a 20-MP progressive 4:4:4 JPEG: 120 MB for a 20 MB half-size output).
    public static func decodeBytes(of bytes: [UInt8], header: ImageHeader, minimumSize: PixelSize?) -> Int {
        let pixels = decodedPixelCount(of: header, minimumSize: minimumSize)
        let coefficients = header.format == .jpeg ? bytes.withUnsafeBytes { JPEGSegments.progressiveCoefficientBytes(in: $0) } : 0
        return pixels.multipliedReportingOverflow(by: 4).overflow ? Int.max : pixels * 4 + coefficients
    }
}
