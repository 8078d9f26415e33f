import CPNGShim

extension ImageEncoders {
    /// PNG through libpng's classic write API (in the CPNGShim C file, which
    /// owns the setjmp): 8-bit RGB, or RGBA when the image has alpha.
    ///
    /// The defaults were chosen by measurement (bench/RESULTS.md): zlib level 4
    /// with libpng's adaptive row filters writes thumbnails about a third
    /// faster than level 6 while staying smaller than libvips' output at
    /// compression 6 (which filters nothing): on a 20-MP photo's four
    /// thumbnails, 1.86 MB against libvips' 2.12 MB (level 6: 1.76 MB).
    ///
    /// ```swift
    /// let png = try ImageEncoders.PNG().encode(image)
    /// ```
    public struct PNG: ImageEncoding {
        /// Row filters, as in the PNG specification.
        public enum Filter: String, Sendable, Hashable, Codable, CaseIterable {
            /// No filtering.
            case none
            /// Difference to the left neighbour.
            case sub
            /// Difference to the row above.
            case up
            /// Paeth predictor.
            case paeth
            /// libpng's adaptive choice among all five filters per row (slowest).
            case adaptive

            var libpngMask: Int32 {
                switch self {
                case .none: 0x08
                case .sub: 0x10
                case .up: 0x20
                case .paeth: 0x80
                case .adaptive: 0x08 | 0x10 | 0x20 | 0x40 | 0x80
                }
            }
        }

        /// zlib level 0...9. 4 by default.
        public var compressionLevel: Int
        /// Row filter. ``Filter/adaptive`` by default.
        public var filter: Filter

        /// Creates the encoder.
        /// - Parameters:
        ///   - compressionLevel: zlib level 0...9 (clamped). 4 by default.
        ///   - filter: row filter. ``Filter/adaptive`` by default.
        public init(compressionLevel: Int = 4, filter: Filter = .adaptive) {
            self.compressionLevel = Swift.min(9, Swift.max(0, compressionLevel))
            self.filter = filter
        }

        /// ``ImageFormat/png``.
        public var format: ImageFormat { .png }

        public func encode(_ image: PixelBuffer) throws(ImageOpsError) -> [UInt8] {
            var options = vs_png_write_options(compression_level: Int32(compressionLevel),
                                               filters: filter.libpngMask, strategy: -1)
            var output: UnsafeMutablePointer<UInt8>?
            var size = 0
            var message = [CChar](repeating: 0, count: 256)
            let status = image.bytes.withUnsafeBufferPointer { pixels in
                vs_png_encode(pixels.baseAddress, UInt32(image.width), UInt32(image.height), image.bytesPerRow,
                              image.hasAlpha ? 1 : 0, &options, &output, &size, &message, message.count)
            }
            guard status == 0, let output else {
                let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                throw .encodingFailed(format: .png, reason: reason.isEmpty ? "unknown libpng error" : reason)
            }
            defer { vs_png_free(output) }
            return Array(UnsafeBufferPointer(start: output, count: size))
        }
    }
}
