extension ImageProcessors {
    /// Resamples to an exact size with a high-quality filter.
    ///
    /// ```swift
    /// let step = ImageProcessors.Resize(to: PixelSize(width: 400, height: 300))
    /// let small = try step.process(image)
    /// ```
    public struct Resize: ImageProcessing {
        /// The output size.
        public var size: PixelSize
        /// The filter. ``ResamplingFilter/lanczos3`` by default.
        public var filter: ResamplingFilter

        /// Creates the step.
        public init(to size: PixelSize, filter: ResamplingFilter = .lanczos3) {
            self.size = size
            self.filter = filter
        }

        /// Fits `image` inside `side × side`, shrinking only and keeping the aspect ratio.
        public static func fitting(_ image: PixelSize, inside side: Int, filter: ResamplingFilter = .lanczos3) -> Resize {
            Resize(to: image.fitting(inside: side), filter: filter)
        }

        /// `vsearch.resize?w=..,h=..,filter=..`.
        public var identifier: String { "vsearch.resize?w=\(size.width),h=\(size.height),filter=\(filter.rawValue)" }

        /// - Throws: ``ImageOpsError/invalidParameter(name:reason:)`` for a size below 1×1.
        public func process(_ image: PixelBuffer) throws(ImageOpsError) -> PixelBuffer {
            guard size.width >= 1, size.height >= 1 else {
                throw .invalidParameter(name: "size", reason: "\(size) is smaller than 1×1")
            }
            return Resampler.resample(image, to: size, filter: filter)
        }
    }
}
