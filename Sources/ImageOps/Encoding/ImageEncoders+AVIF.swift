#if AVIF
import CAVIF

extension ImageEncoders {
    /// AVIF through libavif (AV1 by libaom), 8-bit 4:2:0, one thread.
    ///
    /// Trade-offs (bench/RESULTS.md, issue 13): at quality 50 and speed 8 the
    /// corpus thumbnails were 0.22× JPEG q85's bytes (0.40× lossy WebP's) for
    /// 2.1× JPEG's CPU; lower speeds give smaller files for much more CPU
    /// (libvips' default effort 4 took 14× as long for 6 % fewer bytes). ``quality`` 0...100 maps
    /// to AV1 quantizers 63...0 (libavif 0.11 has no quality setting of its own).
    ///
    /// ```swift
    /// let avif = try ImageEncoders.AVIF(quality: 50).encode(image)
    /// ```
    public struct AVIF: ImageEncoding {
        /// 0...100; 50 by default (sharp's default, about JPEG 80 to the eye).
        public var quality: Int
        /// libavif speed 0 (slowest, smallest) ... 10 (fastest). 8 by default.
        public var speed: Int

        /// Creates the encoder; values are clamped to their ranges.
        public init(quality: Int = 50, speed: Int = 8) {
            self.quality = Swift.min(100, Swift.max(0, quality))
            self.speed = Swift.min(10, Swift.max(0, speed))
        }

        /// ``ImageFormat/avif``.
        public var format: ImageFormat { .avif }

        /// The AV1 quantizer for ``quality``: 100 → 0 (lossless quantizer), 0 → 63.
        var quantizer: Int32 { Int32(((100 - Double(quality)) * 63 / 100).rounded()) }

        public func encode(_ image: PixelBuffer, metadata: OutputMetadata) throws(ImageOpsError) -> [UInt8] {
            guard let avif = avifImageCreate(UInt32(image.width), UInt32(image.height), 8, AVIF_PIXEL_FORMAT_YUV420) else {
                throw .encodingFailed(format: .avif, reason: "libavif could not create an image")
            }
            defer { avifImageDestroy(avif) }
            avif.pointee.yuvRange = AVIF_RANGE_FULL
            avif.pointee.matrixCoefficients = UInt16(AVIF_MATRIX_COEFFICIENTS_BT601)
            if let profile = metadata.colorProfile {
                profile.iccData.withUnsafeBufferPointer { avifImageSetProfileICC(avif, $0.baseAddress, $0.count) }
            } else {
                avif.pointee.colorPrimaries = UInt16(AVIF_COLOR_PRIMARIES_BT709)
                avif.pointee.transferCharacteristics = UInt16(AVIF_TRANSFER_CHARACTERISTICS_SRGB)
            }
            if let exif = metadata.exif {
                exif.withUnsafeBufferPointer { avifImageSetMetadataExif(avif, $0.baseAddress, $0.count) }
            }
            var converted = AVIF_RESULT_OK
            image.bytes.withUnsafeBufferPointer { pixels in
                var rgb = avifRGBImage()
                avifRGBImageSetDefaults(&rgb, avif)
                rgb.format = AVIF_RGB_FORMAT_RGBA
                rgb.depth = 8
                rgb.ignoreAlpha = image.hasAlpha ? 0 : 1
                rgb.pixels = UnsafeMutablePointer(mutating: pixels.baseAddress)
                rgb.rowBytes = UInt32(image.bytesPerRow)
                converted = avifImageRGBToYUV(avif, &rgb)
            }
            guard converted == AVIF_RESULT_OK else {
                throw .encodingFailed(format: .avif, reason: String(cString: avifResultToString(converted)))
            }
            guard let encoder = avifEncoderCreate() else { throw .encodingFailed(format: .avif, reason: "libavif could not create an encoder") }
            defer { avifEncoderDestroy(encoder) }
            encoder.pointee.maxThreads = 1
            encoder.pointee.speed = Int32(speed)
            encoder.pointee.minQuantizer = quantizer
            encoder.pointee.maxQuantizer = quantizer
            encoder.pointee.minQuantizerAlpha = quantizer
            encoder.pointee.maxQuantizerAlpha = quantizer
            var output = avifRWData(data: nil, size: 0)
            let result = avifEncoderWrite(encoder, avif, &output)
            defer { avifRWDataFree(&output) }
            guard result == AVIF_RESULT_OK, let data = output.data else {
                throw .encodingFailed(format: .avif, reason: String(cString: avifResultToString(result)))
            }
            return Array(UnsafeBufferPointer(start: data, count: output.size))
        }
    }
}
#endif
