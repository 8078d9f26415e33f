import CPNGShim

extension ImageDecoders {
    /// PNG through libpng's classic read API (in CPNGShim, which owns the
    /// setjmp): every colour type and bit depth, palettes with tRNS, Adam7.
    ///
    /// Decisions:
    /// - Output is always 8-bit RGBA; ``PixelBuffer/hasAlpha`` is set when the
    ///   file has an alpha channel or tRNS transparency.
    /// - **16-bit samples are scaled to 8 bits as they are** (treated as
    ///   sRGB-encoded) and **gAMA is not applied**, as Pillow and libvips do.
    ///   libpng's simplified `png_image` API was used first and dropped: it
    ///   assumes 16-bit data is linear (brightening it), and on this machine's
    ///   libpng 1.6.39 it returned wrong rows for interlaced 16-bit images — the
    ///   code path of CVE-2025-65018 (see docs/decisions.md).
    /// - The IHDR size is checked against ``ImageLimits`` before libpng reads
    ///   any further, and libpng's own limits are set explicitly (sides ≤ 10⁶,
    ///   ≤ 1000 ancillary chunks, ≤ 8 MB per chunk).
    /// - A file damaged only after its image data (cut inside or before IEND)
    ///   is an error when strict and a warning when lenient.
    /// - libpng warnings about ancillary chunks (e.g. a known-incorrect sRGB
    ///   ICC profile, common in real files) never fail a decode; they are
    ///   reported in ``DecodedImage/warnings``.
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
            guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), !bytes.isEmpty else {
                throw .emptyInput(source: source)
            }
            var info = vs_png_info()
            var message = [CChar](repeating: 0, count: 256)
            if vs_png_read_info(base, bytes.count, &info, &message, message.count) != 0 {
                let reason = PNG.string(message)
                if bytes.count < 64 { throw .truncated(source: source, format: .png, reason: "header incomplete: \(reason)") }
                throw PNG.classify(reason, source: source)
            }
            return ImageHeader(format: .png, storedSize: PixelSize(width: Int(info.width), height: Int(info.height)),
                               orientation: .up, hasAlpha: info.has_alpha != 0)
        }

        public func decode(_ bytes: UnsafeRawBufferPointer, source: String,
                           options: DecodingOptions) throws(ImageOpsError) -> DecodedImage {
            // Check the IHDR's declared size before libpng reads any further chunk.
            if let declared = PNG.declaredSize(bytes) { try options.limits.check(declared, source: source) }
            let header = try readHeader(bytes, source: source)
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
            func decodeRows(into out: UnsafeMutableRawPointer?, bytesPerPixel: Int) {
                status = vs_png_decode(base, bytes.count, out?.assumingMemoryBound(to: UInt8.self), width * bytesPerPixel,
                                       UInt32(width), UInt32(height), bytesPerPixel == 8 ? 1 : 0,
                                       &warningCount, &warning, warning.count, &message, message.count)
            }
            let buffer: PixelBuffer
            if sixteenBit, let profile = declared.profile, case .transform(let transform) = SRGBConversion.plan(for: profile, layout: .rgba16) {
                var wide = [UInt16](repeating: 0, count: width * height * 4)
                wide.withUnsafeMutableBytes { decodeRows(into: $0.baseAddress, bytesPerPixel: 8) }
                buffer = PixelBuffer(width: width, height: height, hasAlpha: header.hasAlpha) { out in
                    wide.withUnsafeBytes { transform.apply($0.baseAddress!, out.baseAddress!, count: width * height) }
                }
            } else {
                buffer = PixelBuffer(width: width, height: height, hasAlpha: header.hasAlpha) { out in
                    decodeRows(into: out.baseAddress, bytesPerPixel: 4)
                }
            }
            if warningCount > 0 { warnings.insert(PNG.string(warning), at: 0) }
            switch status {
            case Int32(VS_PNG_OK):
                break
            case Int32(VS_PNG_DAMAGED_AFTER_DATA):
                let reason = "damaged after the image data: \(PNG.string(message))"
                if options.failurePolicy == .strict { throw .truncated(source: source, format: .png, reason: reason) }
                warnings.append(reason)
            default:
                throw PNG.classify(PNG.string(message), source: source)
            }
            var decoded = DecodedImage(pixels: buffer, header: header, warnings: warnings)
            decoded.metadata = declared.metadata
            if !sixteenBit {
                decoded.applyColorHandling(options.colorHandling, profile: declared.profile, model: model)
            }
            return decoded
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
            var info = vs_png_info()
            var message = [CChar](repeating: 0, count: 256)
            if vs_png_read_info(base, bytes.count, &info, &message, message.count) == 0 {
                declared.bitDepth = Int(info.bit_depth)
                declared.isGray = info.color_type & 2 == 0 && info.color_type != 3
            }
            var chunks = vs_png_metadata()
            guard vs_png_read_metadata(base, bytes.count, &chunks, &message, message.count) == 0 else { return declared }
            defer { vs_png_metadata_free(&chunks) }
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
            return text.isEmpty ? "unknown libpng error" : text
        }

        static func classify(_ message: String, source: String) -> ImageOpsError {
            let truncationMarkers = ["Not enough image data", "unexpected end", "Read Error", "Truncated", "truncated"]
            if truncationMarkers.contains(where: { message.contains($0) }) {
                return .truncated(source: source, format: .png, reason: message)
            }
            return .corrupt(source: source, format: .png, reason: message)
        }
    }
}
