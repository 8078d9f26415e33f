import CPNGCodec

extension ImageEncoders {
    /// PNG through libpng's classic write API (in the CPNGShim C file, which
    /// owns the setjmp): 8-bit RGB, or RGBA when the image has alpha.
    ///
    /// The defaults were chosen by measurement (bench/RESULTS.md, the six PNG
    /// wallpapers' thumbnails, one core): zlib level 2 with the `up` row
    /// filter took 2.08 CPU-s for 15.0 MB, against libvips' 20.1 MB at its
    /// default compression 6 (which filters nothing); level 4 with adaptive
    /// filters took 2.70 s for 12.7 MB and level 6 adaptive 5.0 s for 12.0 MB.
    /// Thumbnails are re-made from their source at will, so speed wins; pass
    /// `compressionLevel: 6, filter: .adaptive` for the smallest files.
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

        /// libdeflate level 0...12. 2 by default.
        public var compressionLevel: Int
        /// Row filter. ``Filter/up`` by default.
        public var filter: Filter

        /// Creates the encoder.
        /// - Parameters:
        ///   - compressionLevel: libdeflate level 0...12 (clamped). 2 by default.
        ///   - filter: row filter. ``Filter/up`` by default.
        public init(compressionLevel: Int = 2, filter: Filter = .up) {
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
