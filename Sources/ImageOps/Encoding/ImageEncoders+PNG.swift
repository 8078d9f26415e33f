import CPNGCodec

extension ImageEncoders {
    /// PNG through vsearch's codec (CPNGCodec): rows filtered, then deflated in
    /// one libdeflate call into a single IDAT; 8-bit RGB, or RGBA when the
    /// image has alpha; iCCP and eXIf when asked.
    ///
    /// The defaults are the cheapest setting whose files are no larger than
    /// Pillow's (zlib 6 with libpng's adaptive filters), measured on the six
    /// PNG wallpapers' thumbnails, one core (bench/RESULTS.md, issue 28):
    /// libdeflate level 7 with adaptive filters, 11.99 MB for ~3.1 CPU-s,
    /// where libpng + zlib needed 4.7 s for 12.02 MB. Levels 8 and up cost
    /// 2.4x more for 3 % less; level 4 adaptive is twice as fast for 7 %
    /// more bytes. The README's "PNG output" table has the whole frontier.
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
            /// Per row, the filter whose output has the smallest sum of absolute
            /// (signed) bytes, among all five (libpng's heuristic; slowest).
            case adaptive

            var codecFilter: Int32 {
                switch self {
                case .none: Int32(VSPNG_FILTER_NONE)
                case .sub: Int32(VSPNG_FILTER_SUB)
                case .up: Int32(VSPNG_FILTER_UP)
                case .paeth: Int32(VSPNG_FILTER_PAETH)
                case .adaptive: Int32(VSPNG_FILTER_ADAPTIVE)
                }
            }
        }

        /// libdeflate level 0...12. 7 by default.
        public var compressionLevel: Int
        /// Row filter. ``Filter/adaptive`` by default.
        public var filter: Filter

        /// Creates the encoder.
        /// - Parameters:
        ///   - compressionLevel: libdeflate level 0...12 (clamped). 7 by default.
        ///   - filter: row filter. ``Filter/adaptive`` by default.
        public init(compressionLevel: Int = 7, filter: Filter = .adaptive) {
            self.compressionLevel = Swift.min(12, Swift.max(0, compressionLevel))
            self.filter = filter
        }

        /// ``ImageFormat/png``.
        public var format: ImageFormat { .png }

        public func encode(_ image: PixelBuffer, metadata: OutputMetadata) throws(ImageOpsError) -> [UInt8] {
            let profile = metadata.colorProfile?.iccData ?? []
            let exif = metadata.exif ?? []
            var output: UnsafeMutablePointer<UInt8>?
            var size = 0
            var message = [CChar](repeating: 0, count: 256)
            let status = profile.withUnsafeBufferPointer { icc in
                exif.withUnsafeBufferPointer { exifBytes in
                    var options = vspng_write_options(level: Int32(compressionLevel), filter: filter.codecFilter,
                                                      icc: icc.isEmpty ? nil : icc.baseAddress, icc_size: icc.count,
                                                      exif: exifBytes.isEmpty ? nil : exifBytes.baseAddress, exif_size: exifBytes.count)
                    return image.bytes.withUnsafeBufferPointer { pixels in
                        vspng_encode(pixels.baseAddress, UInt32(image.width), UInt32(image.height), image.bytesPerRow,
                                     image.hasAlpha ? 1 : 0, &options, &output, &size, &message, message.count)
                    }
                }
            }
            guard status == 0, let output else {
                let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                throw .encodingFailed(format: .png, reason: reason.isEmpty ? "unknown PNG encoder error" : reason)
            }
            defer { vspng_free(output) }
            return Array(UnsafeBufferPointer(start: output, count: size))
        }
    }
}
