#if AVIF
import CAVIF

extension ImageDecoders {
    /// AVIF through libavif (AV1 by dav1d): the primary image, or the first
    /// frame of a sequence.
    ///
    /// - Geometry: `irot` and `imir` (the HEIF way of orienting) are applied
    ///   to the pixels, rotation first; the header reports the displayed size.
    ///   EXIF orientation inside an AVIF is not applied again.
    /// - Colour: an ICC profile, or the CICP/nclx primaries and transfer turned
    ///   into a profile; PQ and HLG are read as sRGB with a warning.
    /// - libavif's own limits are set from ``ImageLimits`` (pixels and side)
    ///   before it allocates anything; one decoding thread.
    public struct AVIF: ImageDecoding {
        /// Creates the decoder.
        public init() {}

        /// ``ImageFormat/avif``.
        public var format: ImageFormat { .avif }

        public func readHeader(_ bytes: UnsafeRawBufferPointer, source: String) throws(ImageOpsError) -> ImageHeader {
            try Decoder(bytes, source: source, limits: .default).header
        }

        public func decode(_ bytes: UnsafeRawBufferPointer, source: String,
                           options: DecodingOptions) throws(ImageOpsError) -> DecodedImage {
            let decoder = try Decoder(bytes, source: source, limits: options.limits)
            try options.limits.check(decoder.header.size, source: source)
            var warnings: [String] = []
            let profile = decoder.colorProfile(warnings: &warnings)
            var pixels = try decoder.decodeFirstImage()
            for step in decoder.geometry { pixels = ImageProcessors.Orient(step).apply(to: pixels) }
            var decoded = DecodedImage(pixels: pixels, header: decoder.header, warnings: warnings)
            decoded.metadata = decoder.metadata()
            decoded.applyColorHandling(options.colorHandling, profile: profile, model: .rgb, deferring: options.defersColorConversion)
            return decoded
        }

        /// A parsed file; released on deinit.
        final class Decoder {
            let raw: UnsafeMutablePointer<avifDecoder>
            let source: String
            /// The displayed size, after `irot`.
            let header: ImageHeader
            /// Rotation then mirror, as orientations to apply in turn.
            let geometry: [Orientation]

            init(_ bytes: UnsafeRawBufferPointer, source: String, limits: ImageLimits) throws(ImageOpsError) {
                guard let base = bytes.baseAddress, !bytes.isEmpty else { throw .emptyInput(source: source) }
                guard let raw = avifDecoderCreate() else {
                    throw .corrupt(source: source, format: .avif, reason: "libavif could not create a decoder")
                }
                raw.pointee.maxThreads = 1
                raw.pointee.imageSizeLimit = UInt32(clamping: limits.maxPixels)
                raw.pointee.imageDimensionLimit = UInt32(clamping: limits.maxSide)
                raw.pointee.imageCountLimit = 1_000
                var result = avifDecoderSetIOMemory(raw, base.assumingMemoryBound(to: UInt8.self), bytes.count)
                if result == AVIF_RESULT_OK { result = avifDecoderParse(raw) }
                guard result == AVIF_RESULT_OK, let image = raw.pointee.image else {
                    avifDecoderDestroy(raw)
                    throw AVIF.error(result, source: source)
                }
                self.raw = raw
                self.source = source
                var steps: [Orientation] = []
                let flags = image.pointee.transformFlags
                if flags & UInt32(AVIF_TRANSFORM_IROT.rawValue) != 0 {
                    // irot turns anti-clockwise by angle × 90°.
                    switch image.pointee.irot.angle {
                    case 1: steps.append(.left)
                    case 2: steps.append(.down)
                    case 3: steps.append(.right)
                    default: break
                    }
                }
                if flags & UInt32(AVIF_TRANSFORM_IMIR.rawValue) != 0 {
                    steps.append(image.pointee.imir.mode == 0 ? .downMirrored : .upMirrored)
                }
                geometry = steps
                let stored = PixelSize(width: Int(image.pointee.width), height: Int(image.pointee.height))
                let swaps = steps.first?.swapsDimensions ?? false
                header = ImageHeader(format: .avif, storedSize: swaps ? stored.transposed : stored, orientation: .up,
                                     hasAlpha: raw.pointee.alphaPresent != 0)
                guard stored.width > 0, stored.height > 0 else {
                    throw ImageOpsError.invalidDimensions(source: source, width: stored.width, height: stored.height)
                }
            }

            deinit { avifDecoderDestroy(raw) }

            var image: UnsafeMutablePointer<avifImage> { raw.pointee.image }

            func colorProfile(warnings: inout [String]) -> ColorProfile? {
                if image.pointee.icc.size > 0, let data = image.pointee.icc.data {
                    return ColorProfile(iccData: Array(UnsafeBufferPointer(start: data, count: image.pointee.icc.size)))
                }
                switch RGBColorSpace.nclx(primaries: Int(image.pointee.colorPrimaries),
                                          transfer: Int(image.pointee.transferCharacteristics)) {
                case .none: return nil
                case .success(let space): return space.profile
                case .failure(let unsupported):
                    warnings.append("colour description ignored (\(unsupported.reason)); pixels read as sRGB")
                    return nil
                }
            }

            func metadata() -> ImageMetadata {
                guard image.pointee.exif.size > 0, let data = image.pointee.exif.data else { return .none }
                var tiff = UnsafeRawBufferPointer(start: data, count: image.pointee.exif.size)
                if tiff.starts(with: JPEGSegments.exifSignature) { tiff = UnsafeRawBufferPointer(rebasing: tiff[6...]) }
                return ImageMetadata(EXIFReader.fields(inTIFF: tiff))
            }

            func decodeFirstImage() throws(ImageOpsError) -> PixelBuffer {
                let result = avifDecoderNextImage(raw)
                guard result == AVIF_RESULT_OK else { throw AVIF.error(result, source: source) }
                let width = Int(image.pointee.width), height = Int(image.pointee.height)
                var conversion = AVIF_RESULT_OK
                let pixels = PixelBuffer(width: width, height: height, hasAlpha: raw.pointee.alphaPresent != 0) { out in
                    var rgb = avifRGBImage()
                    avifRGBImageSetDefaults(&rgb, image)
                    rgb.format = AVIF_RGB_FORMAT_RGBA
                    rgb.depth = 8
                    rgb.pixels = out.baseAddress
                    rgb.rowBytes = UInt32(width * 4)
                    conversion = avifImageYUVToRGB(image, &rgb)
                    if conversion != AVIF_RESULT_OK { out.baseAddress!.initialize(repeating: 0, count: out.count) }
                }
                guard conversion == AVIF_RESULT_OK else { throw AVIF.error(conversion, source: source) }
                return pixels
            }
        }

        static func error(_ result: avifResult, source: String) -> ImageOpsError {
            let message = String(cString: avifResultToString(result))
            return result == AVIF_RESULT_TRUNCATED_DATA
                ? .truncated(source: source, format: .avif, reason: message)
                : .corrupt(source: source, format: .avif, reason: message)
        }
    }
}
#endif
