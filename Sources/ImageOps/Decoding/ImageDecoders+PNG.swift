import CPNGCodec

extension ImageDecoders {
    /// PNG through vsearch's own codec (CPNGCodec, on libdeflate): every
    /// colour type and bit depth, palettes with tRNS, Adam7.
    ///
    /// Decisions:
    /// - **libdeflate, one call** (issue 28): the chunks are walked in place,
    ///   the image data is inflated in one call into a buffer whose size the
    ///   header gives — for non-interlaced images behind the output rows, so no
    ///   second image-sized buffer — and rows are unfiltered with SSE2 for 3-
    ///   and 4-byte pixels. libpng (streaming zlib, row by row) took ~30 % of
    ///   upload preparation; it stays only as the tests' reference
    ///   (CLibPNGReference): the decoder matches it pixel for pixel on every
    ///   PNG the repository holds.
    /// - Output is always 8-bit RGBA; ``PixelBuffer/hasAlpha`` is set when the
    ///   file has an alpha channel or tRNS transparency.
    /// - **16-bit samples are scaled to 8 bits as they are** (rounded as
    ///   libpng's `png_set_scale_16`), never treated as linear light, as Pillow
    ///   and libvips do. gAMA and cHRM are colour information, handled with the
    ///   profile (below).
    /// - The IHDR size is checked against ``ImageLimits`` before anything is
    ///   allocated.
    /// - Every chunk's CRC is checked: a bad critical chunk fails the decode, a
    ///   bad ancillary chunk is ignored with a warning (libpng's defaults).
    /// - A file damaged only after its image data (cut inside or before IEND)
    ///   is an error when strict and a warning when lenient.
    /// - Colour: an iCCP profile, an sRGB chunk, or gAMA + cHRM
    ///   (``readMetadata(_:warnings:)``) is applied per ``ColorHandling``;
    ///   a 16-bit RGB source is converted at 16 bits before it becomes 8.
    /// - EXIF orientation in PNG (eXIf) is not applied; its Artist and
    ///   Copyright are read into ``DecodedImage/metadata``.
    public struct PNG: ImageDecoding {
        /// Creates the decoder.
        public init() {}

        /// ``ImageFormat/png``.
        public var format: ImageFormat { .png }

        public func readHeader(_ bytes: UnsafeRawBufferPointer, source: String) throws(ImageOpsError) -> ImageHeader {
            let info = try PNG.readInfo(bytes, source: source)
            return ImageHeader(format: .png, storedSize: PixelSize(width: Int(info.width), height: Int(info.height)),
                               orientation: .up, hasAlpha: info.has_alpha != 0)
        }

        public func decode(_ bytes: UnsafeRawBufferPointer, source: String,
                           options: DecodingOptions) throws(ImageOpsError) -> DecodedImage {
            // Check the IHDR's declared size before anything else is read.
            if let declared = PNG.declaredSize(bytes) { try options.limits.check(declared, source: source) }
            var info = try PNG.readInfo(bytes, source: source)
            let header = ImageHeader(format: .png, storedSize: PixelSize(width: Int(info.width), height: Int(info.height)),
                                     orientation: .up, hasAlpha: info.has_alpha != 0)
            try options.limits.check(header.storedSize, source: source)
            guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { throw .emptyInput(source: source) }
            let width = header.storedSize.width, height = header.storedSize.height
            var warnings: [String] = []
            let declared = PNG.readMetadata(bytes, warnings: &warnings)
            let model: DecodedColorModel = declared.isGray ? .gray : .rgb
            // A 16-bit RGB source whose profile changes its colours is converted at 16 bits.
            let sixteenBit = declared.bitDepth == 16 && model == .rgb && options.colorHandling == .convertToSRGB
                && declared.profile.map(SRGBConversion.changesRGB) == true
            var status: Int32 = 0
            var warningCount: Int32 = 0
            var warning = [CChar](repeating: 0, count: 256)
            var message = [CChar](repeating: 0, count: 256)
            func decodeRows(into out: UnsafeMutableRawBufferPointer, bytesPerPixel: Int) {
                status = vspng_decode(base, bytes.count, out.baseAddress?.assumingMemoryBound(to: UInt8.self), out.count,
                                      width * bytesPerPixel, &info, bytesPerPixel == 8 ? 1 : 0, 0,
                                      &warningCount, &warning, warning.count, &message, message.count)
            }
            func capacity(bytesPerPixel: Int) throws(ImageOpsError) -> Int {
                let needed = vspng_decode_capacity(&info, width * bytesPerPixel)
                guard needed > 0 else { throw .corrupt(source: source, format: .png, reason: "image too large to address") }
                return needed
            }
            let buffer: PixelBuffer
            if sixteenBit, let profile = declared.profile, case .transform(let transform) = SRGBConversion.plan(for: profile, layout: .rgba16) {
                let samples = (try capacity(bytesPerPixel: 8) + 1) / 2
                var wide = [UInt16](repeating: 0, count: samples)
                wide.withUnsafeMutableBytes { decodeRows(into: $0, bytesPerPixel: 8) }
                buffer = PixelBuffer(width: width, height: height, hasAlpha: header.hasAlpha) { out in
                    wide.withUnsafeBytes { transform.apply($0.baseAddress!, out.baseAddress!, count: width * height) }
                }
            } else {
                let workspace = try capacity(bytesPerPixel: 4) - width * height * 4
                buffer = PixelBuffer(width: width, height: height, hasAlpha: header.hasAlpha, workspace: workspace) { out in
                    decodeRows(into: UnsafeMutableRawBufferPointer(out), bytesPerPixel: 4)
                }
            }
            if warningCount > 0 { warnings.insert(PNG.string(warning), at: 0) }
            switch status {
            case Int32(VSPNG_OK):
                break
            case Int32(VSPNG_DAMAGED_AFTER_DATA):
                let reason = "damaged after the image data: \(PNG.string(message))"
                if options.failurePolicy == .strict { throw .truncated(source: source, format: .png, reason: reason) }
                warnings.append(reason)
            default:
                throw PNG.error(status, PNG.string(message), source: source)
            }
            var decoded = DecodedImage(pixels: buffer, header: header, warnings: warnings)
            decoded.metadata = declared.metadata
            if !sixteenBit {
                decoded.applyColorHandling(options.colorHandling, profile: declared.profile, model: model, deferring: options.defersColorConversion)
            }
            return decoded
        }

        /// The checked IHDR (and tRNS) of a PNG.
        static func readInfo(_ bytes: UnsafeRawBufferPointer, source: String) throws(ImageOpsError) -> vspng_header {
            guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), !bytes.isEmpty else {
                throw .emptyInput(source: source)
            }
            var info = vspng_header()
            var message = [CChar](repeating: 0, count: 256)
            let status = vspng_read_header(base, bytes.count, &info, &message, message.count)
            guard status == VSPNG_OK else { throw PNG.error(status, PNG.string(message), source: source) }
            return info
        }

        /// What a PNG declares about its colours and rights.
        struct DeclaredMetadata {
            var profile: ColorProfile?
            var metadata: ImageMetadata = .none
            var bitDepth = 8
            var isGray = false
        }

        /// Reads iCCP, sRGB, gAMA, cHRM and eXIf. The profile is, in the
        /// order of precedence PNG gives them: iCCP; none for an sRGB chunk;
        /// one made from gAMA and cHRM (gAMA alone: BT.709 primaries; gAMA
        /// 1/2.2 alone is read as sRGB, as browsers do).
        static func readMetadata(_ bytes: UnsafeRawBufferPointer, warnings: inout [String]) -> DeclaredMetadata {
            var declared = DeclaredMetadata()
            guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return declared }
            var message = [CChar](repeating: 0, count: 256)
            var warning = [CChar](repeating: 0, count: 256)
            var info = vspng_header()
            if vspng_read_header(base, bytes.count, &info, &message, message.count) == VSPNG_OK {
                declared.bitDepth = Int(info.bit_depth)
                declared.isGray = info.color_type & 2 == 0 && info.color_type != 3
            }
            var chunks = vspng_metadata()
            guard vspng_read_metadata(base, bytes.count, &chunks, &warning, warning.count, &message, message.count) == VSPNG_OK else {
                return declared
            }
            defer { vspng_metadata_free(&chunks) }
            if chunks.warnings > 0 { warnings.append(PNG.string(warning)) }
            if let exif = chunks.exif, chunks.exif_size > 0 {
                declared.metadata = ImageMetadata(EXIFReader.fields(inTIFF: UnsafeRawBufferPointer(start: exif, count: chunks.exif_size)))
            }
            if let icc = chunks.icc, chunks.icc_size > 0 {
                declared.profile = ColorProfile(iccData: Array(UnsafeBufferPointer(start: icc, count: chunks.icc_size)))
            } else if chunks.srgb != 0 {
                declared.profile = nil
            } else if chunks.gamma > 0 {
                let c = withUnsafeBytes(of: chunks.chromaticities) { Array($0.bindMemory(to: Double.self)) }
                let primaries: RGBColorSpace.Primaries? = chunks.has_chromaticities != 0
                    ? RGBColorSpace.Primaries(white: .init(x: c[0], y: c[1]), red: .init(x: c[2], y: c[3]),
                                              green: .init(x: c[4], y: c[5]), blue: .init(x: c[6], y: c[7]))
                    : nil
                if primaries == nil && abs(chunks.gamma - 1 / 2.2) < 0.001 { return declared }
                let space = RGBColorSpace(primaries: primaries ?? .bt709, transfer: .gamma(1 / chunks.gamma))
                if declared.isGray {
                    warnings.append("gAMA/cHRM of a gray PNG ignored; pixels read as sRGB")
                } else if let profile = space.profile {
                    declared.profile = profile
                } else {
                    warnings.append("colour chunks ignored (gAMA \(chunks.gamma) with these cHRM primaries make no profile); pixels read as sRGB")
                }
            }
            return declared
        }

        /// Width and height from the IHDR chunk, which must directly follow the signature.
        static func declaredSize(_ bytes: UnsafeRawBufferPointer) -> PixelSize? {
            guard bytes.count >= 24, bytes[12] == 0x49, bytes[13] == 0x48, bytes[14] == 0x44, bytes[15] == 0x52 else { return nil }
            func u32(_ at: Int) -> Int { (0..<4).reduce(0) { $0 << 8 | Int(bytes[at + $1]) } }
            return PixelSize(width: u32(16), height: u32(20))
        }

        static func string(_ buffer: [CChar]) -> String {
            let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return text.isEmpty ? "unknown PNG error" : text
        }

        static func error(_ status: Int32, _ reason: String, source: String) -> ImageOpsError {
            status == VSPNG_TRUNCATED ? .truncated(source: source, format: .png, reason: reason)
                : .corrupt(source: source, format: .png, reason: reason)
        }
    }
}
