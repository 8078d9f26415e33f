/// Decoded pixels: 8 bits per channel, always four bytes per pixel in R, G, B,
/// A order, rows packed without padding (`bytesPerRow == width * 4`).
///
/// Opaque images (``hasAlpha`` false) keep 255 in the fourth byte. One layout
/// for every image keeps the resampler's inner loops on whole 32-bit pixels
/// (SIMD-friendly) and lets JPEG and PNG encoders read rows directly.
/// Alpha is straight (not premultiplied); the resampler premultiplies
/// internally while it filters.
///
/// ```swift
/// let red = PixelBuffer(width: 2, height: 2, hasAlpha: false, fill: (255, 0, 0, 255))
/// red.pixel(x: 1, y: 1) // (255, 0, 0, 255)
/// ```
public struct PixelBuffer: Sendable, Hashable {
    /// Width in pixels, at least 1.
    public let width: Int
    /// Height in pixels, at least 1.
    public let height: Int
    /// Whether the fourth byte carries meaningful alpha.
    public var hasAlpha: Bool
    /// The pixel bytes, `width * height * 4` of them.
    public var bytes: [UInt8]

    /// Bytes per pixel: always 4.
    public static let channels = 4

    /// Bytes from one row to the next.
    public var bytesPerRow: Int { width * PixelBuffer.channels }

    /// The size.
    public var size: PixelSize { PixelSize(width: width, height: height) }

    /// Wraps existing RGBA bytes.
    /// - Precondition: `bytes.count == width * height * 4`.
    public init(width: Int, height: Int, hasAlpha: Bool, bytes: [UInt8]) {
        precondition(width > 0 && height > 0 && bytes.count == width * height * PixelBuffer.channels,
                     "PixelBuffer bytes do not match \(width)×\(height)")
        self.width = width
        self.height = height
        self.hasAlpha = hasAlpha
        self.bytes = bytes
    }

    /// A buffer filled with one colour.
    public init(width: Int, height: Int, hasAlpha: Bool, fill: (UInt8, UInt8, UInt8, UInt8)) {
        var bytes = [UInt8](repeating: 0, count: width * height * 4)
        for index in stride(from: 0, to: bytes.count, by: 4) {
            bytes[index] = fill.0
            bytes[index + 1] = fill.1
            bytes[index + 2] = fill.2
            bytes[index + 3] = fill.3
        }
        self.init(width: width, height: height, hasAlpha: hasAlpha, bytes: bytes)
    }

    /// A buffer whose bytes are produced by `initializer`, which must write all
    /// `width * height * 4` of them. No zero-filling pass is spent.
    ///
    /// `workspace` bytes more are handed to `initializer` after the pixels, for
    /// a decoder that stages its input behind the rows it writes (the PNG
    /// decoder inflates there); they stay allocated but are not pixels.
    public init(width: Int, height: Int, hasAlpha: Bool, workspace: Int = 0,
                initializingWith initializer: (UnsafeMutableBufferPointer<UInt8>) throws -> Void) rethrows {
        let count = width * height * PixelBuffer.channels
        let bytes = try [UInt8](unsafeUninitializedCapacity: count + Swift.max(0, workspace)) { buffer, initializedCount in
            try initializer(buffer)
            initializedCount = count
        }
        self.init(width: width, height: height, hasAlpha: hasAlpha, bytes: bytes)
    }

    /// The RGBA values at a pixel.
    public func pixel(x: Int, y: Int) -> (r: UInt8, g: UInt8, b: UInt8, a: UInt8) {
        let index = (y * width + x) * 4
        return (bytes[index], bytes[index + 1], bytes[index + 2], bytes[index + 3])
    }

    /// The pixels as packed 3-byte RGB (alpha dropped).
    public func rgbBytes() -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: width * height * 3) { out, count in
            bytes.withUnsafeBufferPointer { src in
                for pixel in 0..<(width * height) {
                    out[pixel * 3] = src[pixel * 4]
                    out[pixel * 3 + 1] = src[pixel * 4 + 1]
                    out[pixel * 3 + 2] = src[pixel * 4 + 2]
                }
            }
            count = width * height * 3
        }
    }

    /// The image composited over an opaque background colour (white by
    /// default); an opaque image is returned unchanged.
    public func flattened(onto background: (r: UInt8, g: UInt8, b: UInt8) = (255, 255, 255)) -> PixelBuffer {
        guard hasAlpha else { return self }
        var copy = self
        copy.hasAlpha = false
        copy.bytes.withUnsafeMutableBufferPointer { pixels in
            for index in stride(from: 0, to: pixels.count, by: 4) {
                let alpha = UInt32(pixels[index + 3])
                let inverse = 255 - alpha
                pixels[index] = UInt8((UInt32(pixels[index]) * alpha + UInt32(background.r) * inverse + 127) / 255)
                pixels[index + 1] = UInt8((UInt32(pixels[index + 1]) * alpha + UInt32(background.g) * inverse + 127) / 255)
                pixels[index + 2] = UInt8((UInt32(pixels[index + 2]) * alpha + UInt32(background.b) * inverse + 127) / 255)
                pixels[index + 3] = 255
            }
        }
        return copy
    }
}
