import Foundation

/// The front door for decoding: sniffs the format from the bytes (never the
/// file name), checks the input size, then hands over to the decoder for
/// the format.
///
/// ```swift
/// let image = try ImageDecoder.decode(fileAt: "photo.jpg",
///                                     options: DecodingOptions(minimumSize: PixelSize(width: 400, height: 400)))
/// print(image.pixels.size, image.header.size)
/// ```
public enum ImageDecoder {
    /// The decoders in use, by format.
    public static let decoders: [ImageFormat: any ImageDecoding] = {
        var decoders: [ImageFormat: any ImageDecoding] = [.jpeg: ImageDecoders.JPEG(), .png: ImageDecoders.PNG()]
        #if WebP
        decoders[.webp] = ImageDecoders.WebP()
        #endif
        #if HEIF
        decoders[.heif] = ImageDecoders.HEIF()
        #endif
        #if AVIF
        decoders[.avif] = ImageDecoders.AVIF()
        #endif
        #if GIF
        decoders[.gif] = ImageDecoders.GIF()
        #endif
        return decoders
    }()

    /// Reads only the header.
    /// - Parameter source: names the input in errors (a path, or a label such as `"upload"`).
    /// - Throws: ``ImageOpsError``.
    public static func readHeader(_ bytes: UnsafeRawBufferPointer, source: String) throws(ImageOpsError) -> ImageHeader {
        try decoder(for: bytes, source: source).readHeader(bytes, source: source)
    }

    /// Decodes an encoded image held in memory.
    /// - Throws: ``ImageOpsError``.
    public static func decode(_ bytes: UnsafeRawBufferPointer, source: String,
                              options: DecodingOptions = DecodingOptions()) throws(ImageOpsError) -> DecodedImage {
        try options.limits.check(byteCount: bytes.count, source: source)
        return try decoder(for: bytes, source: source).decode(bytes, source: source, options: options)
    }

    /// Decodes an encoded image held in a byte array.
    public static func decode(_ bytes: [UInt8], source: String,
                              options: DecodingOptions = DecodingOptions()) throws(ImageOpsError) -> DecodedImage {
        try bytes.withImageBytes { raw throws(ImageOpsError) in try decode(raw, source: source, options: options) }
    }

    /// Reads the header of an in-memory image.
    public static func readHeader(_ bytes: [UInt8], source: String) throws(ImageOpsError) -> ImageHeader {
        try bytes.withImageBytes { raw throws(ImageOpsError) in try readHeader(raw, source: source) }
    }

    /// Reads the header and checks it against `limits`, the size a PNG's IHDR
    /// declares first: a decompression bomb is reported as the limit it
    /// exceeds even when the codec could not finish reading its header (a
    /// header-only PNG declaring 100000×100000 has no image data at all).
    /// - Throws: ``ImageOpsError``; ``ImageOpsError/limitExceeded(source:limit:)`` before anything else is reported.
    public static func readHeader(_ bytes: [UInt8], source: String, limits: ImageLimits) throws(ImageOpsError) -> ImageHeader {
        try bytes.withImageBytes { raw throws(ImageOpsError) in
            try limits.check(byteCount: raw.count, source: source)
            let decoder = try decoder(for: raw, source: source)
            if decoder.format == .png, let declared = ImageDecoders.PNG.declaredSize(raw) { try limits.check(declared, source: source) }
            let header = try decoder.readHeader(raw, source: source)
            try limits.check(header, source: source)
            return header
        }
    }

    /// Reads and decodes a file. The file's size is checked against
    /// ``ImageLimits/maxInputBytes`` before it is read.
    public static func decode(fileAt path: String,
                              options: DecodingOptions = DecodingOptions()) throws(ImageOpsError) -> DecodedImage {
        let bytes = try FileIO.read(path, maxBytes: options.limits.maxInputBytes)
        return try decode(bytes, source: path, options: options)
    }

    /// Picks the decoder from the magic bytes.
    static func decoder(for bytes: UnsafeRawBufferPointer, source: String) throws(ImageOpsError) -> any ImageDecoding {
        guard !bytes.isEmpty else { throw .emptyInput(source: source) }
        guard let format = ImageFormat(sniffing: bytes) else {
            let magic = Array(bytes.prefix(8))
            let signatures: [(ImageFormat, [UInt8])] = [(.jpeg, [0xFF, 0xD8, 0xFF]), (.png, [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])]
            for (format, signature) in signatures where magic.count < signature.count && signature.starts(with: magic) {
                throw .truncated(source: source, format: format, reason: "header incomplete: only \(magic.count) bytes")
            }
            if magic.count >= 4 && magic[1...3].elementsEqual([0x50, 0x4E, 0x47]) {
                throw .corrupt(source: source, format: .png,
                               reason: "damaged PNG signature (line endings converted by a text-mode transfer?)")
            }
            throw .unrecognisedFormat(source: source, magic: magic)
        }
        guard let decoder = decoders[format] else { throw .unsupportedFormat(source: source, format: format) }
        return decoder
    }
}
