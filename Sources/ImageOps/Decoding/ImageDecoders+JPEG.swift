import CTurboJPEG

extension ImageDecoders {
    /// JPEG through libjpeg-turbo's TurboJPEG API: baseline, progressive,
    /// arithmetic-coded, grayscale, CMYK and YCCK.
    ///
    /// - Shrink-on-load: decodes at the smallest DCT scale (1/2, 1/4, 1/8)
    ///   whose result still covers ``DecodingOptions/minimumSize``.
    /// - Progressive files are limited in their number of scans
    ///   (`TJFLAG_LIMITSCANS`) against the progressive-JPEG denial of service.
    /// - Strict mode sets `TJFLAG_STOPONWARNING`, so a truncated file is an error.
    /// - CMYK/YCCK (Adobe, inverted) is converted to RGB through its embedded
    ///   profile, or as `c·k/255` without one.
    /// - An embedded ICC profile (APP2, one or several segments) is applied
    ///   (``ColorHandling``); EXIF Artist and Copyright are read into
    ///   ``DecodedImage/metadata``.
    /// - libjpeg-turbo never prints: TurboJPEG keeps messages per handle.
    public struct JPEG: ImageDecoding {
        /// Creates the decoder.
        public init() {}

        /// ``ImageFormat/jpeg``.
        public var format: ImageFormat { .jpeg }

        public func readHeader(_ bytes: UnsafeRawBufferPointer, source: String) throws(ImageOpsError) -> ImageHeader {
            let handle = try Handle(source: source)
            defer { handle.close() }
            let info = try handle.header(bytes, source: source)
            return ImageHeader(format: .jpeg, storedSize: info.size,
                               orientation: EXIFReader.orientation(inJPEG: bytes) ?? .up, hasAlpha: false)
        }

        public func decode(_ bytes: UnsafeRawBufferPointer, source: String,
                           options: DecodingOptions) throws(ImageOpsError) -> DecodedImage {
            let handle = try Handle(source: source)
            defer { handle.close() }
            let info = try handle.header(bytes, source: source)
            try options.limits.check(info.size, source: source)
            let orientation = options.appliesOrientation ? (EXIFReader.orientation(inJPEG: bytes) ?? .up) : .up
            let header = ImageHeader(format: .jpeg, storedSize: info.size, orientation: orientation, hasAlpha: false)

            // Shrink-on-load: the smallest scale whose output still covers the minimum (in stored orientation).
            let denominator = ShrinkOnLoad.denominator(
                for: info.size, minimum: options.minimumSize.map { orientation.swapsDimensions ? $0.transposed : $0 },
                candidates: ShrinkOnLoad.denominators(for: .jpeg))
            let width = ShrinkOnLoad.scaled(info.size.width, denominator)
            let height = ShrinkOnLoad.scaled(info.size.height, denominator)

            var flags = TJFLAG_LIMITSCANS
            if options.failurePolicy == .strict { flags |= TJFLAG_STOPONWARNING }
            let isCMYK = info.colorspace == Int32(TJCS_CMYK.rawValue) || info.colorspace == Int32(TJCS_YCCK.rawValue)
            let pixelFormat = isCMYK ? TJPF_CMYK : TJPF_RGBX
            var warnings: [String] = []
            var failure: ImageOpsError?

            // Lenient decoding may leave rows unwritten; give them defined contents.
            let zeroFill = options.failurePolicy == .lenient
            let buffer = PixelBuffer(width: width, height: height, hasAlpha: false) { out in
                if zeroFill, let base = out.baseAddress { base.initialize(repeating: 0, count: out.count) }
                let status = tjDecompress2(handle.raw, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
                                           UInt(bytes.count), out.baseAddress, Int32(width), Int32(width * 4),
                                           Int32(height), pixelFormat.rawValue, flags)
                if status != 0 {
                    let message = handle.lastError
                    if handle.lastErrorIsWarning && options.failurePolicy == .lenient {
                        warnings.append(message)
                    } else {
                        failure = JPEG.classify(message, source: source)
                    }
                }
            }
            if let failure { throw failure }
            var decoded = DecodedImage(pixels: buffer, header: header, warnings: warnings)
            decoded.metadata = JPEG.metadata(bytes)
            let model: DecodedColorModel = isCMYK ? .invertedCMYK : info.colorspace == Int32(TJCS_GRAY.rawValue) ? .gray : .rgb
            decoded.applyColorHandling(options.colorHandling, profile: JPEG.colorProfile(bytes, warnings: &decoded.warnings),
                                       model: model, deferring: options.defersColorConversion)
            if orientation != .up {
                decoded.pixels = ImageProcessors.Orient(orientation).apply(to: decoded.pixels)
            }
            return decoded
        }

        /// The ICC profile of the APP2 segments; a damaged one is a warning.
        static func colorProfile(_ bytes: UnsafeRawBufferPointer, warnings: inout [String]) -> ColorProfile? {
            switch JPEGSegments.iccProfile(in: bytes) {
            case .none: return nil
            case .success(let data): return ColorProfile(iccData: data)
            case .failure(let problem):
                warnings.append("colour profile ignored (\(problem.reason)); pixels read as sRGB")
                return nil
            }
        }

        /// Artist and Copyright from the APP1 EXIF segment.
        static func metadata(_ bytes: UnsafeRawBufferPointer) -> ImageMetadata {
            JPEGSegments.exif(in: bytes).map { ImageMetadata(EXIFReader.fields(inTIFF: $0)) } ?? .none
        }

        /// Maps a libjpeg message to a typed error.
        static func classify(_ message: String, source: String) -> ImageOpsError {
            let truncationMarkers = ["Premature end", "premature end", "Bogus marker length", "Corrupt JPEG data: premature"]
            if truncationMarkers.contains(where: message.contains) {
                return .truncated(source: source, format: .jpeg, reason: message)
            }
            if message.contains("Empty JPEG image") {
                return .corrupt(source: source, format: .jpeg, reason: "\(message): the frame header declares height 0")
            }
            return .corrupt(source: source, format: .jpeg, reason: message)
        }

        /// A TurboJPEG decompressor handle owned by one decode call.
        struct Handle {
            let raw: tjhandle

            init(source: String) throws(ImageOpsError) {
                guard let raw = tjInitDecompress() else {
                    throw .corrupt(source: source, format: .jpeg, reason: "libjpeg-turbo could not create a decompressor")
                }
                self.raw = raw
            }

            func close() { tjDestroy(raw) }

            var lastError: String {
                guard let message = tjGetErrorStr2(raw) else { return "unknown libjpeg-turbo error" }
                return String(cString: message)
            }

            var lastErrorIsWarning: Bool { tjGetErrorCode(raw) == Int32(TJERR_WARNING.rawValue) }

            struct Info {
                var size: PixelSize
                var colorspace: Int32
            }

            func header(_ bytes: UnsafeRawBufferPointer, source: String) throws(ImageOpsError) -> Info {
                guard !bytes.isEmpty else { throw .emptyInput(source: source) }
                var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
                let status = tjDecompressHeader3(raw, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
                                                 UInt(bytes.count), &width, &height, &subsampling, &colorspace)
                if status != 0 {
                    let message = lastError
                    if bytes.count < 200 || message.contains("Premature end") {
                        throw .truncated(source: source, format: .jpeg, reason: "header incomplete: \(message)")
                    }
                    throw .corrupt(source: source, format: .jpeg, reason: message)
                }
                guard width > 0, height > 0 else {
                    // TurboJPEG 2.1 can "succeed" on a stream cut before its frame header.
                    if !JPEGSegments.hasFrameHeader(in: bytes) {
                        throw .truncated(source: source, format: .jpeg, reason: "header incomplete: no frame header (SOF) before the data ends")
                    }
                    throw .invalidDimensions(source: source, width: Int(width), height: Int(height))
                }
                return Info(size: PixelSize(width: Int(width), height: Int(height)), colorspace: colorspace)
            }
        }
    }
}
