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
    /// - EXIF orientation in PNG (eXIf) is not applied.
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
            var status: Int32 = 0
            var warningCount: Int32 = 0
            var warning = [CChar](repeating: 0, count: 256)
            var message = [CChar](repeating: 0, count: 256)
            let buffer = PixelBuffer(width: width, height: height, hasAlpha: header.hasAlpha) { out in
                status = vs_png_decode(base, bytes.count, out.baseAddress, width * 4, UInt32(width), UInt32(height),
                                       &warningCount, &warning, warning.count, &message, message.count)
            }
            var warnings: [String] = warningCount > 0 ? [PNG.string(warning)] : []
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
            return DecodedImage(pixels: buffer, header: header, warnings: warnings)
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
