import CLibPNG

extension ImageDecoders {
    /// PNG through libpng's simplified `png_image` API: every colour type and
    /// bit depth, palettes with tRNS, Adam7 interlacing.
    ///
    /// The simplified API catches libpng's longjmp internally, so it is safe to
    /// call from Swift and never prints. Decisions:
    /// - Output is always 8-bit RGBA; ``PixelBuffer/hasAlpha`` is set when the
    ///   file has an alpha channel or tRNS transparency.
    /// - **16-bit input is treated as sRGB-encoded** (`PNG_IMAGE_FLAG_16BIT_sRGB`)
    ///   and scaled to 8 bits, as browsers, Pillow and ImageMagick show it.
    ///   Without that flag libpng assumes 16-bit data is *linear* and would
    ///   gamma-encode it, brightening the image. A file with a gAMA chunk is
    ///   still converted according to its gamma.
    /// - The header is checked against ``ImageLimits`` before the pixel buffer
    ///   is allocated, so a bomb costs only its header read.
    /// - EXIF orientation in PNG (eXIf) is not applied: it is rare and not
    ///   honoured by most viewers.
    public struct PNG: ImageDecoding {
        /// Creates the decoder.
        public init() {}

        /// ``ImageFormat/png``.
        public var format: ImageFormat { .png }

        // Values of libpng's function-like macros, which Swift does not import.
        static let formatFlagAlpha: UInt32 = 0x01
        static let formatFlagColor: UInt32 = 0x02
        static let formatRGBA: UInt32 = formatFlagColor | formatFlagAlpha
        static let imageFlag16BitSRGB: UInt32 = 0x04
        static let imageWarning: UInt32 = 1

        public func readHeader(_ bytes: UnsafeRawBufferPointer, source: String) throws(ImageOpsError) -> ImageHeader {
            let image = try begin(bytes, source: source)
            defer { release(image) }
            return header(of: image.pointee)
        }

        public func decode(_ bytes: UnsafeRawBufferPointer, source: String,
                           options: DecodingOptions) throws(ImageOpsError) -> DecodedImage {
            // Check the IHDR's declared size before libpng reads any further chunk.
            if let declared = PNG.declaredSize(bytes) { try options.limits.check(declared, source: source) }
            let image = try begin(bytes, source: source)
            defer { release(image) }
            let header = header(of: image.pointee)
            try options.limits.check(header.storedSize, source: source)
            image.pointee.format = PNG.formatRGBA
            image.pointee.flags |= PNG.imageFlag16BitSRGB
            let width = header.storedSize.width, height = header.storedSize.height
            var failure: ImageOpsError?
            var warnings: [String] = []
            let buffer = PixelBuffer(width: width, height: height, hasAlpha: header.hasAlpha) { out in
                // libpng writes every row or fails; a failure discards the buffer.
                let ok = png_image_finish_read(image, nil, out.baseAddress, Int32(width * 4), nil)
                if ok == 0 {
                    failure = PNG.classify(PNG.message(of: image.pointee), source: source)
                } else if image.pointee.warning_or_error & PNG.imageWarning != 0 {
                    let message = PNG.message(of: image.pointee)
                    if options.failurePolicy == .strict {
                        failure = PNG.classify(message, source: source)
                    } else {
                        warnings.append(message)
                    }
                }
            }
            if let failure { throw failure }
            // libpng's simplified reader stops after the image data; a file cut
            // after that (no complete IEND chunk) is still an incomplete file.
            if !PNG.endsWithIEND(bytes) {
                let message = "the file ends before its IEND chunk"
                if options.failurePolicy == .strict { throw .truncated(source: source, format: .png, reason: message) }
                warnings.append(message)
            }
            return DecodedImage(pixels: buffer, header: header, warnings: warnings)
        }

        /// Starts a read. libpng keeps the address of the `png_image` as its
        /// error context between begin and finish, so the struct lives on the
        /// heap and never moves (a Swift `var` copied between calls would leave
        /// libpng writing into a dead stack frame on error).
        private func begin(_ bytes: UnsafeRawBufferPointer, source: String) throws(ImageOpsError) -> UnsafeMutablePointer<png_image> {
            guard let base = bytes.baseAddress, !bytes.isEmpty else { throw .emptyInput(source: source) }
            let image = UnsafeMutablePointer<png_image>.allocate(capacity: 1)
            image.initialize(to: png_image())
            image.pointee.version = UInt32(PNG_IMAGE_VERSION)
            if png_image_begin_read_from_memory(image, base, bytes.count) == 0 {
                let message = PNG.message(of: image.pointee)
                release(image)
                if bytes.count < 64 {
                    throw .truncated(source: source, format: .png, reason: "header incomplete: \(message)")
                }
                throw PNG.classify(message, source: source)
            }
            return image
        }

        private func release(_ image: UnsafeMutablePointer<png_image>) {
            png_image_free(image)
            image.deinitialize(count: 1)
            image.deallocate()
        }

        private func header(of image: png_image) -> ImageHeader {
            ImageHeader(format: .png, storedSize: PixelSize(width: Int(image.width), height: Int(image.height)),
                        orientation: .up, hasAlpha: image.format & PNG.formatFlagAlpha != 0)
        }

        /// Width and height from the IHDR chunk, which must directly follow the signature.
        static func declaredSize(_ bytes: UnsafeRawBufferPointer) -> PixelSize? {
            guard bytes.count >= 24, bytes[12] == 0x49, bytes[13] == 0x48, bytes[14] == 0x44, bytes[15] == 0x52 else { return nil }
            func u32(_ at: Int) -> Int { (0..<4).reduce(0) { $0 << 8 | Int(bytes[at + $1]) } }
            return PixelSize(width: u32(16), height: u32(20))
        }

        /// Whether a complete IEND chunk (type plus its constant CRC AE426082)
        /// appears near the end of the file; trailing junk after it is tolerated.
        static func endsWithIEND(_ bytes: UnsafeRawBufferPointer) -> Bool {
            let trailer: [UInt8] = [0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82]
            guard bytes.count >= trailer.count else { return false }
            let lowest = Swift.max(0, bytes.count - 65_536)
            var start = bytes.count - trailer.count
            while start >= lowest {
                if bytes[start] == 0x49 && (0..<trailer.count).allSatisfy({ bytes[start + $0] == trailer[$0] }) { return true }
                start -= 1
            }
            return false
        }

        static func message(of image: png_image) -> String {
            withUnsafeBytes(of: image.message) { raw in
                let bytes = raw.prefix { $0 != 0 }
                let text = String(decoding: bytes, as: UTF8.self)
                return text.isEmpty ? "unknown libpng error" : text
            }
        }

        static func classify(_ message: String, source: String) -> ImageOpsError {
            let truncationMarkers = ["Not enough image data", "Read Error", "read beyond end", "unexpected end", "Truncated"]
            if truncationMarkers.contains(where: { message.localizedLowercaseContains($0) }) {
                return .truncated(source: source, format: .png, reason: message)
            }
            return .corrupt(source: source, format: .png, reason: message)
        }
    }
}

extension String {
    func localizedLowercaseContains(_ other: String) -> Bool {
        lowercased().contains(other.lowercased())
    }
}
