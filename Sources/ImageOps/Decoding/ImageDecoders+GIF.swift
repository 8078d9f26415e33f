#if GIF
import CGIF

extension ImageDecoders {
    /// GIF through giflib: the first frame, placed on its logical screen as
    /// browsers show it (areas it does not cover and its transparent index are
    /// transparent); interlaced frames are put back in order.
    ///
    /// Only the records up to the first frame are read (an animation's other
    /// frames are never decoded), and the canvas and frame sizes are checked
    /// against ``ImageLimits`` before any pixel memory is allocated.
    public struct GIF: ImageDecoding {
        /// Creates the decoder.
        public init() {}

        /// ``ImageFormat/gif``.
        public var format: ImageFormat { .gif }

        public func readHeader(_ bytes: UnsafeRawBufferPointer, source: String) throws(ImageOpsError) -> ImageHeader {
            try FirstFrame(bytes, source: source).header
        }

        public func decode(_ bytes: UnsafeRawBufferPointer, source: String,
                           options: DecodingOptions) throws(ImageOpsError) -> DecodedImage {
            let frame = try FirstFrame(bytes, source: source)
            try options.limits.check(frame.header.storedSize, source: source)
            try options.limits.check(frame.frameRect.size, source: source)
            var warnings: [String] = []
            let pixels = try frame.decode(lenient: options.failurePolicy == .lenient, warnings: &warnings)
            return DecodedImage(pixels: pixels, header: frame.header, warnings: warnings)
        }

        /// The bytes giflib reads through its callback.
        final class Reader {
            let bytes: UnsafeRawBufferPointer
            var offset = 0
            init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }
        }

        /// An open file positioned at the first frame's pixel data.
        final class FirstFrame {
            let file: UnsafeMutablePointer<GifFileType>
            let reader: Reader
            let source: String
            let header: ImageHeader
            let frameRect: PixelRect
            let transparentIndex: Int?
            let interlaced: Bool
            let palette: [(UInt8, UInt8, UInt8)]

            init(_ bytes: UnsafeRawBufferPointer, source: String) throws(ImageOpsError) {
                guard !bytes.isEmpty else { throw .emptyInput(source: source) }
                let reader = Reader(bytes)
                var status: Int32 = 0
                let opened = DGifOpen(Unmanaged.passUnretained(reader).toOpaque(), { file, buffer, count in
                    guard let file, let buffer, count > 0, let user = file.pointee.UserData else { return 0 }
                    let reader = Unmanaged<Reader>.fromOpaque(user).takeUnretainedValue()
                    let available = Swift.min(Int(count), reader.bytes.count - reader.offset)
                    guard available > 0 else { return 0 }
                    UnsafeMutableRawPointer(buffer).copyMemory(from: reader.bytes.baseAddress! + reader.offset, byteCount: available)
                    reader.offset += available
                    return Int32(available)
                }, &status)
                guard let opened else { throw GIF.error(status, source: source, stage: "header") }
                file = opened
                self.reader = reader
                self.source = source
                var transparent: Int?
                // Walk the records to the first image descriptor, noting its graphic control extension.
                while true {
                    var type = UNDEFINED_RECORD_TYPE
                    guard DGifGetRecordType(file, &type) == GIF_OK else {
                        let code = file.pointee.Error
                        DGifCloseFile(file, nil)
                        throw GIF.error(code, source: source, stage: "records before the first frame")
                    }
                    if type == IMAGE_DESC_RECORD_TYPE { break }
                    if type == TERMINATE_RECORD_TYPE {
                        DGifCloseFile(file, nil)
                        throw ImageOpsError.corrupt(source: source, format: .gif, reason: "the file has no frame")
                    }
                    guard type == EXTENSION_RECORD_TYPE else { continue }
                    var code: Int32 = 0
                    var block: UnsafeMutablePointer<GifByteType>?
                    guard DGifGetExtension(file, &code, &block) == GIF_OK else {
                        let error = file.pointee.Error
                        DGifCloseFile(file, nil)
                        throw GIF.error(error, source: source, stage: "extension block")
                    }
                    if code == GRAPHICS_EXT_FUNC_CODE, let block, block[0] >= 4 {
                        transparent = block[1] & 1 != 0 ? Int(block[4]) : nil
                    }
                    while block != nil {
                        guard DGifGetExtensionNext(file, &block) == GIF_OK else {
                            let error = file.pointee.Error
                            DGifCloseFile(file, nil)
                            throw GIF.error(error, source: source, stage: "extension block")
                        }
                    }
                }
                guard DGifGetImageDesc(file) == GIF_OK else {
                    let error = file.pointee.Error
                    DGifCloseFile(file, nil)
                    throw GIF.error(error, source: source, stage: "frame descriptor")
                }
                let image = file.pointee.Image
                frameRect = PixelRect(x: Int(image.Left), y: Int(image.Top), width: Int(image.Width), height: Int(image.Height))
                interlaced = image.Interlace
                transparentIndex = transparent
                let map = image.ColorMap ?? file.pointee.SColorMap
                var colors: [(UInt8, UInt8, UInt8)] = []
                if let map, let entries = map.pointee.Colors {
                    for index in 0..<Int(Swift.max(0, Swift.min(256, map.pointee.ColorCount))) {
                        colors.append((entries[index].Red, entries[index].Green, entries[index].Blue))
                    }
                }
                palette = colors
                // The canvas is the logical screen, grown to hold the frame when the screen is smaller.
                let canvas = PixelSize(width: Swift.max(Int(file.pointee.SWidth), frameRect.x + frameRect.width),
                                       height: Swift.max(Int(file.pointee.SHeight), frameRect.y + frameRect.height))
                let coversCanvas = frameRect.x == 0 && frameRect.y == 0 && frameRect.size == canvas
                header = ImageHeader(format: .gif, storedSize: canvas, orientation: .up,
                                     hasAlpha: transparent != nil || !coversCanvas)
                // Every stored property is set from here on, so a throw runs deinit, which closes
                // the file: closing it here as well freed it twice (fuzz finding,
                // Fuzz/Regressions/gif).
                guard frameRect.width > 0, frameRect.height > 0 else {
                    throw ImageOpsError.invalidDimensions(source: source, width: frameRect.width, height: frameRect.height)
                }
                guard !colors.isEmpty else {
                    throw ImageOpsError.corrupt(source: source, format: .gif, reason: "no colour table for the first frame")
                }
            }

            deinit { DGifCloseFile(file, nil) }

            /// Reads the frame's rows onto a transparent canvas.
            func decode(lenient: Bool, warnings: inout [String]) throws(ImageOpsError) -> PixelBuffer {
                let canvas = header.storedSize
                let rect = frameRect
                // Row order: interlaced frames store rows 0, 8, 16…, then 4, 12…, then 2, 6…, then 1, 3….
                let order: [Int] = interlaced
                    ? [(0, 8), (4, 8), (2, 4), (1, 2)].flatMap { start, step in Array(stride(from: start, to: rect.height, by: step)) }
                    : Array(0..<rect.height)
                var line = [GifPixelType](repeating: 0, count: rect.width)
                var failure: Int32?
                let palette = self.palette
                let transparent = transparentIndex ?? -1
                let pixels = PixelBuffer(width: canvas.width, height: canvas.height, hasAlpha: header.hasAlpha) { out in
                    out.baseAddress!.initialize(repeating: 0, count: out.count)
                    for row in order {
                        guard DGifGetLine(file, &line, Int32(rect.width)) == GIF_OK else {
                            failure = file.pointee.Error
                            return
                        }
                        let target = out.baseAddress! + ((rect.y + row) * canvas.width + rect.x) * 4
                        for x in 0..<rect.width {
                            let index = Int(line[x])
                            if index == transparent { continue }
                            let color = index < palette.count ? palette[index] : (0, 0, 0)
                            target[x * 4] = color.0
                            target[x * 4 + 1] = color.1
                            target[x * 4 + 2] = color.2
                            target[x * 4 + 3] = 255
                        }
                    }
                }
                if let failure {
                    let error = GIF.error(failure, source: source, stage: "image data")
                    guard lenient else { throw error }
                    warnings.append(error.description)
                }
                return pixels
            }
        }

        static func error(_ code: Int32, source: String, stage: String) -> ImageOpsError {
            let message = GifErrorString(code).map { String(cString: $0) } ?? "giflib error \(code)"
            // A screen descriptor is only ever missing because the file ends inside it.
            if code == D_GIF_ERR_READ_FAILED || code == D_GIF_ERR_EOF_TOO_SOON || code == D_GIF_ERR_NO_SCRN_DSCR {
                return .truncated(source: source, format: .gif, reason: "\(stage) incomplete (\(message))")
            }
            return .corrupt(source: source, format: .gif, reason: "\(stage): \(message)")
        }
    }
}
#endif
