#if WebP
import CWebP

extension ImageDecoders {
    /// WebP through libwebp: lossy, lossless, with alpha, and animations
    /// (the first frame on its transparent canvas, as libwebp's animation
    /// decoder composes it — decoded straight onto one canvas-sized buffer: the
    /// animation decoder held three, issue 37).
    ///
    /// - Shrink-on-load: a still image is decoded by libwebp's scaler at 1/2,
    ///   1/4 or 1/8 when that still covers ``DecodingOptions/minimumSize``.
    /// - The ICCP chunk is applied (``ColorHandling``); the EXIF chunk gives
    ///   orientation (applied, as libvips does) and Artist/Copyright.
    /// - The canvas size is checked against ``ImageLimits`` before libwebp
    ///   allocates anything; for an animation, the canvas and its first
    ///   frame's buffer together (``ImageHeader/Animation``).
    public struct WebP: ImageDecoding {
        /// Creates the decoder.
        public init() {}

        /// ``ImageFormat/webp``.
        public var format: ImageFormat { .webp }

        public func readHeader(_ bytes: UnsafeRawBufferPointer, source: String) throws(ImageOpsError) -> ImageHeader {
            let features = try WebP.features(bytes, source: source)
            let chunks = WebP.chunks(bytes)
            return WebP.header(bytes, features: features, orientation: chunks.exif.orientation ?? .up)
        }

        public func decode(_ bytes: UnsafeRawBufferPointer, source: String,
                           options: DecodingOptions) throws(ImageOpsError) -> DecodedImage {
            let features = try WebP.features(bytes, source: source)
            try options.limits.check(features.size, source: source)
            let chunks = WebP.chunks(bytes)
            let orientation = options.appliesOrientation ? (chunks.exif.orientation ?? .up) : .up
            let header = WebP.header(bytes, features: features, orientation: orientation)
            try options.limits.check(header, source: source)
            let pixels = features.isAnimated
                ? try WebP.decodeFirstFrame(bytes, canvas: features.size, source: source)
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

        /// The header, with an animation's frames and first frame read from its chunks.
        static func header(_ bytes: UnsafeRawBufferPointer, features: Features, orientation: Orientation) -> ImageHeader {
            var header = ImageHeader(format: .webp, storedSize: features.size, orientation: orientation, hasAlpha: features.hasAlpha)
            if features.isAnimated { header.animation = animation(bytes, canvas: features.size) }
            return header
        }

        /// An animation's frame count and first frame, from its chunk headers
        /// (a truncated file as far as it goes). A first frame that cannot be
        /// read is taken to be as large as the canvas: the cost is never underestimated.
        static func animation(_ bytes: UnsafeRawBufferPointer, canvas: PixelSize) -> ImageHeader.Animation {
            let wholeCanvas = PixelRect(x: 0, y: 0, width: canvas.width, height: canvas.height)
            var data = WebPData(bytes: bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), size: bytes.count)
            var state = WEBP_DEMUX_PARSING_HEADER
            guard let demux = WebPDemuxPartial(&data, &state) else {
                return ImageHeader.Animation(frames: 1, firstFrame: wholeCanvas, canvas: canvas)
            }
            defer { WebPDemuxDelete(demux) }
            let frames = max(1, Int(WebPDemuxGetI(demux, WEBP_FF_FRAME_COUNT)))
            var iterator = WebPIterator()
            guard WebPDemuxGetFrame(demux, 1, &iterator) != 0 else {
                return ImageHeader.Animation(frames: frames, firstFrame: wholeCanvas, canvas: canvas)
            }
            defer { WebPDemuxReleaseIterator(&iterator) }
            let first = PixelRect(x: Int(iterator.x_offset), y: Int(iterator.y_offset), width: Int(iterator.width), height: Int(iterator.height))
            var features = WebPBitstreamFeatures()
            var buffer = ImageHeader.Animation.FrameBuffer.whole
            if WebPGetFeatures(iterator.fragment.bytes, iterator.fragment.size, &features) == VP8_STATUS_OK, features.format == 1 {
                buffer = features.has_alpha != 0 ? .alphaPlane : .rows  // 1: lossy (2: lossless, 0: unknown)
            }
            return ImageHeader.Animation(frames: frames, firstFrame: first, canvas: canvas, frameBuffer: buffer)
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

        /// The first frame of an animation on its canvas, as libwebp's animation
        /// decoder gives it (the first frame is a key frame: drawn on a cleared,
        /// transparent canvas, without blending), decoded by `WebPDecode` straight
        /// into one canvas-sized buffer at the frame's offset. The animation
        /// decoder allocated two canvases of its own beside the caller's copy
        /// (a 5600×5600 canvas cost 360 MB, issue 37); this holds the canvas and
        /// libwebp's buffer for the frame (``ImageHeader/Animation/pixelsHeld``).
        static func decodeFirstFrame(_ bytes: UnsafeRawBufferPointer, canvas: PixelSize, source: String) throws(ImageOpsError) -> PixelBuffer {
            var data = WebPData(bytes: bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), size: bytes.count)
            guard let demux = WebPDemux(&data) else {
                throw .corrupt(source: source, format: .webp, reason: "animation cannot be read (damaged or truncated frames)")
            }
            defer { WebPDemuxDelete(demux) }
            guard Int(WebPDemuxGetI(demux, WEBP_FF_CANVAS_WIDTH)) == canvas.width,
                  Int(WebPDemuxGetI(demux, WEBP_FF_CANVAS_HEIGHT)) == canvas.height else {
                throw .corrupt(source: source, format: .webp, reason: "animation canvas differs from its header")
            }
            var iterator = WebPIterator()
            guard WebPDemuxGetFrame(demux, 1, &iterator) != 0 else {
                throw .corrupt(source: source, format: .webp, reason: "the first animation frame cannot be decoded")
            }
            defer { WebPDemuxReleaseIterator(&iterator) }
            let frame = PixelRect(x: Int(iterator.x_offset), y: Int(iterator.y_offset), width: Int(iterator.width), height: Int(iterator.height))
            guard frame.width > 0, frame.height > 0, frame.x >= 0, frame.y >= 0,
                  frame.x + frame.width <= canvas.width, frame.y + frame.height <= canvas.height else {
                throw .corrupt(source: source, format: .webp, reason: "the first animation frame lies outside the canvas")
            }
            var config = WebPDecoderConfig()
            guard WebPInitDecoderConfig(&config) != 0 else {
                throw .corrupt(source: source, format: .webp, reason: "libwebp version mismatch")
            }
            var status = VP8_STATUS_OK
            let fragment = iterator.fragment
            // Frames may leave parts of the canvas transparent.
            let pixels = PixelBuffer(width: canvas.width, height: canvas.height, hasAlpha: true) { out in
                out.baseAddress!.initialize(repeating: 0, count: out.count)
                let offset = (frame.y * canvas.width + frame.x) * 4
                config.output.colorspace = MODE_RGBA
                config.output.is_external_memory = 1
                config.output.u.RGBA.rgba = out.baseAddress! + offset
                config.output.u.RGBA.stride = Int32(canvas.width * 4)
                config.output.u.RGBA.size = out.count - offset
                status = WebPDecode(fragment.bytes, fragment.size, &config)
                if status != VP8_STATUS_OK { out.baseAddress!.update(repeating: 0, count: out.count) }
                WebPFreeDecBuffer(&config.output)
            }
            guard status == VP8_STATUS_OK else { throw error(status, source: source, stage: "first animation frame") }
            return pixels
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
#endif
