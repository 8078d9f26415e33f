import CWebP

extension ImageDecoders {
    /// WebP through libwebp: lossy, lossless, with alpha, and animations
    /// (the first frame, composed on its canvas by libwebp's animation decoder).
    ///
    /// - Shrink-on-load: a still image is decoded by libwebp's scaler at 1/2,
    ///   1/4 or 1/8 when that still covers ``DecodingOptions/minimumSize``.
    /// - The ICCP chunk is applied (``ColorHandling``); the EXIF chunk gives
    ///   orientation (applied, as libvips does) and Artist/Copyright.
    /// - The canvas size is checked against ``ImageLimits`` before libwebp
    ///   allocates anything.
    public struct WebP: ImageDecoding {
        /// Creates the decoder.
        public init() {}

        /// ``ImageFormat/webp``.
        public var format: ImageFormat { .webp }

        public func readHeader(_ bytes: UnsafeRawBufferPointer, source: String) throws(ImageOpsError) -> ImageHeader {
            let features = try WebP.features(bytes, source: source)
            let chunks = WebP.chunks(bytes)
            return ImageHeader(format: .webp, storedSize: features.size, orientation: chunks.exif.orientation ?? .up,
                               hasAlpha: features.hasAlpha)
        }

        public func decode(_ bytes: UnsafeRawBufferPointer, source: String,
                           options: DecodingOptions) throws(ImageOpsError) -> DecodedImage {
            let features = try WebP.features(bytes, source: source)
            try options.limits.check(features.size, source: source)
            let chunks = WebP.chunks(bytes)
            let orientation = options.appliesOrientation ? (chunks.exif.orientation ?? .up) : .up
            let header = ImageHeader(format: .webp, storedSize: features.size, orientation: orientation, hasAlpha: features.hasAlpha)
            let pixels = features.isAnimated
                ? try WebP.decodeFirstFrame(bytes, size: features.size, hasAlpha: features.hasAlpha, source: source)
                : try WebP.decodeStill(bytes, features: features, minimumSize: options.minimumSize.map {
                    orientation.swapsDimensions ? $0.transposed : $0
                }, source: source)
            var decoded = DecodedImage(pixels: pixels, header: header, warnings: [])
            decoded.metadata = ImageMetadata(chunks.exif)
            decoded.applyColorHandling(options.colorHandling, profile: chunks.profile, model: .rgb, deferring: options.defersColorConversion)
            if orientation != .up { decoded.pixels = ImageProcessors.Orient(orientation).apply(to: decoded.pixels) }
            return decoded
        }

        struct Features {
            var size: PixelSize
            var hasAlpha: Bool
            var isAnimated: Bool
        }

        static func features(_ bytes: UnsafeRawBufferPointer, source: String) throws(ImageOpsError) -> Features {
            guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), !bytes.isEmpty else {
                throw .emptyInput(source: source)
            }
            var features = WebPBitstreamFeatures()
            let status = WebPGetFeatures(base, bytes.count, &features)
            guard status == VP8_STATUS_OK else { throw error(status, source: source, stage: "header") }
            guard features.width > 0, features.height > 0 else {
                throw .invalidDimensions(source: source, width: Int(features.width), height: Int(features.height))
            }
            return Features(size: PixelSize(width: Int(features.width), height: Int(features.height)),
                            hasAlpha: features.has_alpha != 0, isAnimated: features.has_animation != 0)
        }

        /// The ICCP and EXIF chunks of an extended (VP8X) file.
        static func chunks(_ bytes: UnsafeRawBufferPointer) -> (profile: ColorProfile?, exif: EXIFReader.Fields) {
            var data = WebPData(bytes: bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), size: bytes.count)
            guard let demux = WebPDemux(&data) else { return (nil, EXIFReader.Fields()) }
            defer { WebPDemuxDelete(demux) }
            func chunk(_ name: String) -> UnsafeRawBufferPointer? {
                var iterator = WebPChunkIterator()
                guard WebPDemuxGetChunk(demux, name, 1, &iterator) != 0 else { return nil }
                defer { WebPDemuxReleaseChunkIterator(&iterator) }
                guard let start = iterator.chunk.bytes, iterator.chunk.size > 0 else { return nil }
                // The chunk lives in `bytes`, which outlives this call.
                return UnsafeRawBufferPointer(start: start, count: iterator.chunk.size)
            }
            let profile = chunk("ICCP").map { ColorProfile(iccData: Array($0)) }
            var exif = EXIFReader.Fields()
            if var tiff = chunk("EXIF") {
                // Some writers keep JPEG's "Exif\0\0" prefix.
                if tiff.starts(with: JPEGSegments.exifSignature) { tiff = UnsafeRawBufferPointer(rebasing: tiff[6...]) }
                exif = EXIFReader.fields(inTIFF: tiff)
            }
            return (profile, exif)
        }

        static func decodeStill(_ bytes: UnsafeRawBufferPointer, features: Features, minimumSize: PixelSize?,
                                source: String) throws(ImageOpsError) -> PixelBuffer {
            let denominator = ShrinkOnLoad.denominator(for: features.size, minimum: minimumSize,
                                                       candidates: ShrinkOnLoad.denominators(for: .webp))
            let width = ShrinkOnLoad.scaled(features.size.width, denominator)
            let height = ShrinkOnLoad.scaled(features.size.height, denominator)
            var config = WebPDecoderConfig()
            guard WebPInitDecoderConfig(&config) != 0 else {
                throw .corrupt(source: source, format: .webp, reason: "libwebp version mismatch")
            }
            if denominator > 1 {
                config.options.use_scaling = 1
                config.options.scaled_width = Int32(width)
                config.options.scaled_height = Int32(height)
            }
            var status = VP8_STATUS_OK
            let pixels = PixelBuffer(width: width, height: height, hasAlpha: features.hasAlpha) { out in
                config.output.colorspace = MODE_RGBA
                config.output.is_external_memory = 1
                config.output.u.RGBA.rgba = out.baseAddress
                config.output.u.RGBA.stride = Int32(width * 4)
                config.output.u.RGBA.size = out.count
                status = WebPDecode(bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, &config)
                if status != VP8_STATUS_OK, let base = out.baseAddress { base.initialize(repeating: 0, count: out.count) }
                WebPFreeDecBuffer(&config.output)
            }
            guard status == VP8_STATUS_OK else { throw error(status, source: source, stage: "image data") }
            return pixels
        }

        static func decodeFirstFrame(_ bytes: UnsafeRawBufferPointer, size: PixelSize, hasAlpha: Bool,
                                     source: String) throws(ImageOpsError) -> PixelBuffer {
            var options = WebPAnimDecoderOptions()
            guard WebPAnimDecoderOptionsInit(&options) != 0 else {
                throw .corrupt(source: source, format: .webp, reason: "libwebp version mismatch")
            }
            options.color_mode = MODE_RGBA
            options.use_threads = 0
            var data = WebPData(bytes: bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), size: bytes.count)
            guard let decoder = WebPAnimDecoderNew(&data, &options) else {
                throw .corrupt(source: source, format: .webp, reason: "animation cannot be read (damaged or truncated frames)")
            }
            defer { WebPAnimDecoderDelete(decoder) }
            var info = WebPAnimInfo()
            guard WebPAnimDecoderGetInfo(decoder, &info) != 0,
                  Int(info.canvas_width) == size.width, Int(info.canvas_height) == size.height else {
                throw .corrupt(source: source, format: .webp, reason: "animation canvas differs from its header")
            }
            var frame: UnsafeMutablePointer<UInt8>?
            var timestamp: Int32 = 0
            guard WebPAnimDecoderGetNext(decoder, &frame, &timestamp) != 0, let frame else {
                throw .corrupt(source: source, format: .webp, reason: "the first animation frame cannot be decoded")
            }
            // Frames may leave parts of the canvas transparent.
            return PixelBuffer(width: size.width, height: size.height, hasAlpha: true) { out in
                out.baseAddress!.update(from: frame, count: out.count)
            }
        }

        static func error(_ status: VP8StatusCode, source: String, stage: String) -> ImageOpsError {
            switch status {
            case VP8_STATUS_NOT_ENOUGH_DATA:
                return .truncated(source: source, format: .webp, reason: "\(stage) incomplete")
            case VP8_STATUS_UNSUPPORTED_FEATURE:
                return .corrupt(source: source, format: .webp, reason: "uses a feature libwebp does not support")
            case VP8_STATUS_OUT_OF_MEMORY:
                return .corrupt(source: source, format: .webp, reason: "libwebp ran out of memory")
            default:
                return .corrupt(source: source, format: .webp, reason: "invalid bitstream in the \(stage)")
            }
        }
    }
}
