extension ImageProcessors {
    /// Copies a rectangle out of an image.
    ///
    /// Use ``PixelBox/region(in:)`` to turn a user's box (clamped, points
    /// expanded) into the rectangle.
    public struct Crop: ImageProcessing {
        /// The rectangle to keep.
        public var rect: PixelRect

        /// Creates the step.
        public init(_ rect: PixelRect) { self.rect = rect }

        /// `vsearch.crop?x=..,y=..,w=..,h=..`.
        public var identifier: String { "vsearch.crop?x=\(rect.x),y=\(rect.y),w=\(rect.width),h=\(rect.height)" }

        /// - Throws: ``ImageOpsError/invalidParameter(name:reason:)`` when the
        ///   rectangle is empty or not inside the image.
        public func process(_ image: PixelBuffer) throws(ImageOpsError) -> PixelBuffer {
            guard rect.width > 0, rect.height > 0, rect.x >= 0, rect.y >= 0,
                  rect.x + rect.width <= image.width, rect.y + rect.height <= image.height else {
                throw .invalidParameter(name: "crop rectangle",
                                        reason: "\(rect.x),\(rect.y) \(rect.width)×\(rect.height) is not inside the \(image.size) image")
            }
            if rect.x == 0, rect.y == 0, rect.width == image.width, rect.height == image.height { return image }
            let rect = self.rect
            return PixelBuffer(width: rect.width, height: rect.height, hasAlpha: image.hasAlpha) { dst in
                image.bytes.withUnsafeBytes { src in
                    guard let srcBase = src.baseAddress, let dstBase = dst.baseAddress else { return }
                    let rowBytes = rect.width * 4
                    for row in 0..<rect.height {
                        let from = srcBase + ((rect.y + row) * image.width + rect.x) * 4
                        (dstBase + row * rowBytes).update(from: from.assumingMemoryBound(to: UInt8.self), count: rowBytes)
                    }
                }
            }
        }
    }
}
