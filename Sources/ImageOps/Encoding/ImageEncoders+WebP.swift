#if WebP
import CWebP

extension ImageEncoders {
    /// WebP through libwebp: lossy (with alpha when the image has it) or
    /// lossless. An ICC profile and a rights notice go into ICCP and EXIF
    /// chunks through libwebp's mux library.
    ///
    /// Trade-offs (bench/RESULTS.md, thumbnails of the corpus): lossy WebP at
    /// quality 80 is smaller than JPEG at 85 for photos and costs more CPU to
    /// encode; lossless suits graphics (few colours, sharp edges) and is far
    /// smaller than PNG there, but slower to encode. ``effort`` is libwebp's
    /// `method` (0 fastest … 6 smallest).
    ///
    /// ```swift
    /// let webp = try ImageEncoders.WebP(quality: 80).encode(image)
    /// let lossless = try ImageEncoders.WebP(isLossless: true).encode(logo)
    /// ```
    public struct WebP: ImageEncoding {
        /// libwebp quality 0...100 (lossy) or compression effort (lossless). 80 by default.
        public var quality: Int
        /// Lossless instead of lossy. `false` by default.
        public var isLossless: Bool
        /// libwebp's `method`, 0...6. 4 by default (libwebp's own default).
        public var effort: Int

        /// Creates the encoder; values are clamped to their ranges.
        public init(quality: Int = 80, isLossless: Bool = false, effort: Int = 4) {
            self.quality = Swift.min(100, Swift.max(0, quality))
            self.isLossless = isLossless
            self.effort = Swift.min(6, Swift.max(0, effort))
        }

        /// ``ImageFormat/webp``.
        public var format: ImageFormat { .webp }

        public func encode(_ image: PixelBuffer, metadata: OutputMetadata) throws(ImageOpsError) -> [UInt8] {
            guard image.width <= Int(WEBP_MAX_DIMENSION), image.height <= Int(WEBP_MAX_DIMENSION) else {
                throw .encodingFailed(format: .webp, reason: "\(image.width)×\(image.height) exceeds WebP's \(WEBP_MAX_DIMENSION) px limit")
            }
            var config = WebPConfig()
            guard WebPConfigPreset(&config, WEBP_PRESET_DEFAULT, Float(quality)) != 0 else {
                throw .encodingFailed(format: .webp, reason: "libwebp version mismatch")
            }
            config.method = Int32(effort)
            config.lossless = isLossless ? 1 : 0
            config.thread_level = 0
            guard WebPValidateConfig(&config) != 0 else { throw .encodingFailed(format: .webp, reason: "invalid settings") }
            var picture = WebPPicture()
            guard WebPPictureInit(&picture) != 0 else { throw .encodingFailed(format: .webp, reason: "libwebp version mismatch") }
            defer { WebPPictureFree(&picture) }
            picture.width = Int32(image.width)
            picture.height = Int32(image.height)
            picture.use_argb = isLossless ? 1 : 0
            let imported = image.bytes.withUnsafeBufferPointer { pixels in
                image.hasAlpha
                    ? WebPPictureImportRGBA(&picture, pixels.baseAddress, Int32(image.bytesPerRow))
                    : WebPPictureImportRGBX(&picture, pixels.baseAddress, Int32(image.bytesPerRow))
            }
            guard imported != 0 else { throw .encodingFailed(format: .webp, reason: "out of memory importing pixels") }
            var writer = WebPMemoryWriter()
            WebPMemoryWriterInit(&writer)
            defer { WebPMemoryWriterClear(&writer) }
            let encoded = withUnsafeMutablePointer(to: &writer) { writerPointer in
                picture.writer = WebPMemoryWrite
                picture.custom_ptr = UnsafeMutableRawPointer(writerPointer)
                return WebPEncode(&config, &picture)
            }
            guard encoded != 0, let memory = writer.mem else {
                throw .encodingFailed(format: .webp, reason: "libwebp error \(picture.error_code.rawValue)")
            }
            let bitstream = Array(UnsafeBufferPointer(start: memory, count: writer.size))
            return try WebP.embedding(metadata, in: bitstream)
        }

        /// The file with ICCP and EXIF chunks added (a VP8X extended file), or as it is without metadata.
        static func embedding(_ metadata: OutputMetadata, in bitstream: [UInt8]) throws(ImageOpsError) -> [UInt8] {
            let chunks = [("ICCP", metadata.colorProfile?.iccData), ("EXIF", metadata.exif)].compactMap { name, data in
                data.map { (name, $0) }
            }
            guard !chunks.isEmpty else { return bitstream }
            return try bitstream.withUnsafeBufferPointer { (stream) throws(ImageOpsError) -> [UInt8] in
                var input = WebPData(bytes: stream.baseAddress, size: stream.count)
                guard let mux = WebPMuxCreate(&input, 1) else { throw .encodingFailed(format: .webp, reason: "libwebp mux cannot read its own output") }
                defer { WebPMuxDelete(mux) }
                for (name, data) in chunks {
                    let status = data.withUnsafeBufferPointer { bytes in
                        var chunk = WebPData(bytes: bytes.baseAddress, size: bytes.count)
                        return WebPMuxSetChunk(mux, name, &chunk, 1)
                    }
                    guard status == WEBP_MUX_OK else { throw .encodingFailed(format: .webp, reason: "cannot add the \(name) chunk") }
                }
                var output = WebPData()
                guard WebPMuxAssemble(mux, &output) == WEBP_MUX_OK, let bytes = output.bytes else {
                    throw .encodingFailed(format: .webp, reason: "cannot assemble the file with metadata")
                }
                defer { WebPDataClear(&output) }
                return Array(UnsafeBufferPointer(start: bytes, count: output.size))
            }
        }
    }
}
#endif
