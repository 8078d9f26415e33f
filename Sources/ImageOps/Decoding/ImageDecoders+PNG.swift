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
            var image = try begin(bytes, source: source)
            defer { png_image_free(&image) }
            return header(of: image)
        }

        public func decode(_ bytes: UnsafeRawBufferPointer, source: String,
                           options: DecodingOptions) throws(ImageOpsError) -> DecodedImage {
            var image = try begin(bytes, source: source)
            let header = header(of: image)
            do {
                try options.limits.check(header.storedSize, source: source)
            } catch {
                png_image_free(&image)
                throw error
            }
            image.format = PNG.formatRGBA
            image.flags |= PNG.imageFlag16BitSRGB
            let width = header.storedSize.width, height = header.storedSize.height
            var failure: ImageOpsError?
            var warnings: [String] = []
            let buffer = PixelBuffer(width: width, height: height, hasAlpha: header.hasAlpha) { out in
                // libpng writes every row or fails; a failure discards the buffer.
                let ok = png_image_finish_read(&image, nil, out.baseAddress, Int32(width * 4), nil)
                if ok == 0 {
                    failure = PNG.classify(PNG.message(of: image), source: source)
                } else if image.warning_or_error & PNG.imageWarning != 0 {
                    let message = PNG.message(of: image)
                    if options.failurePolicy == .strict {
                        failure = PNG.classify(message, source: source)
                    } else {
                        warnings.append(message)
                    }
                }
            }
            png_image_free(&image)
            if let failure { throw failure }
            return DecodedImage(pixels: buffer, header: header, warnings: warnings)
        }

        private func begin(_ bytes: UnsafeRawBufferPointer, source: String) throws(ImageOpsError) -> png_image {
            guard let base = bytes.baseAddress, !bytes.isEmpty else { throw .emptyInput(source: source) }
            var image = png_image()
            image.version = UInt32(PNG_IMAGE_VERSION)
            if png_image_begin_read_from_memory(&image, base, bytes.count) == 0 {
                let message = PNG.message(of: image)
                png_image_free(&image)
                if bytes.count < 64 {
                    throw .truncated(source: source, format: .png, reason: "header incomplete: \(message)")
                }
                throw PNG.classify(message, source: source)
            }
            return image
        }

        private func header(of image: png_image) -> ImageHeader {
            ImageHeader(format: .png, storedSize: PixelSize(width: Int(image.width), height: Int(image.height)),
                        orientation: .up, hasAlpha: image.format & PNG.formatFlagAlpha != 0)
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
