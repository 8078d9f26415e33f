/// An image file format, recognised from its first bytes ("magic"), never from
/// a file name.
///
/// ```swift
/// ImageFormat(sniffing: bytes) // .jpeg, .png, ... or nil
/// ```
public enum ImageFormat: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    case jpeg
    case png
    case gif
    case webp
    case bmp
    case tiff
    case heif
    case avif

    /// Whether this build decodes the format: JPEG and PNG always; WebP, HEIF, AVIF and GIF when their package
    /// traits are on (they are by default); never BMP or TIFF.
    public var isSupported: Bool { ImageDecoder.decoders[self] != nil }

    /// Whether this build writes the format: JPEG and PNG always; WebP and AVIF when their package traits are on.
    public var isWritable: Bool {
        switch self {
        case .jpeg, .png:
            return true
        case .webp:
            #if WebP
            return true
            #else
            return false
            #endif
        case .avif:
            #if AVIF
            return true
            #else
            return false
            #endif
        case .gif, .bmp, .tiff, .heif:
            return false
        }
    }

    /// The package trait that compiles this format's codec in, for the formats that have one
    /// (`"WebP"`, `"HEIF"`, `"AVIF"`, `"GIF"`); `nil` for JPEG and PNG (always in) and BMP/TIFF (never read).
    public var packageTrait: String? {
        switch self {
        case .webp: "WebP"
        case .heif: "HEIF"
        case .avif: "AVIF"
        case .gif: "GIF"
        case .jpeg, .png, .bmp, .tiff: nil
        }
    }

    /// The name people know the format by, as messages print it: `JPEG`, `WebP`, `HEIC/HEIF`.
    public var displayName: String {
        switch self {
        case .jpeg: "JPEG"
        case .png: "PNG"
        case .gif: "GIF"
        case .webp: "WebP"
        case .bmp: "BMP"
        case .tiff: "TIFF"
        case .heif: "HEIC/HEIF"
        case .avif: "AVIF"
        }
    }

    /// The formats this build decodes, in the order messages list them: `[.jpeg, .png, .webp, .heif, .avif, .gif]`
    /// with every codec trait on.
    public static var readable: [ImageFormat] { [.jpeg, .png, .webp, .heif, .avif, .gif].filter(\.isSupported) }

    /// The usual file extension, without the dot.
    public var preferredExtension: String {
        switch self {
        case .jpeg: "jpg"
        case .png: "png"
        case .gif: "gif"
        case .webp: "webp"
        case .bmp: "bmp"
        case .tiff: "tif"
        case .heif: "heic"
        case .avif: "avif"
        }
    }

    /// File extensions (lower case, no dot) that name image files. The
    /// thumbnail job considers files with these extensions and reports the
    /// ones it cannot read.
    public static let imageFileExtensions: Set<String> = [
        "jpg", "jpeg", "jpe", "jfif", "png", "gif", "webp", "bmp", "tif", "tiff", "heic", "heif", "avif",
    ]

    /// The extensions of the formats vsearch decodes (``isSupported``): what a
    /// message listing "the image files vsearch reads" lists.
    public static var readableExtensions: [String] {
        imageFileExtensions.filter { ext in allCases.contains { $0.isSupported && $0.matches(extension: ext) } }.sorted()
    }

    /// Whether `ext` (without the dot, any case) is an extension this format is known by.
    public func matches(extension ext: String) -> Bool {
        switch (self, ext.lowercased()) {
        case (.jpeg, "jpg"), (.jpeg, "jpeg"), (.jpeg, "jpe"), (.jpeg, "jfif"), (.png, "png"),
             (.tiff, "tif"), (.tiff, "tiff"), (.heif, "heic"), (.heif, "heif"):
            true
        case (_, let other):
            other == preferredExtension
        }
    }

    /// Recognises the format from the first bytes of a file; `nil` when unknown.
    public init?(sniffing bytes: UnsafeRawBufferPointer) {
        func has(_ signature: [UInt8], at offset: Int = 0) -> Bool {
            guard bytes.count >= offset + signature.count else { return false }
            for (index, byte) in signature.enumerated() where bytes[offset + index] != byte { return false }
            return true
        }
        if has([0xFF, 0xD8, 0xFF]) {
            self = .jpeg
        } else if has([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            self = .png
        } else if has(Array("GIF8".utf8)) {
            self = .gif
        } else if has(Array("RIFF".utf8)) && has(Array("WEBP".utf8), at: 8) {
            self = .webp
        } else if has(Array("BM".utf8)) {
            self = .bmp
        } else if has([0x49, 0x49, 0x2A, 0x00]) || has([0x4D, 0x4D, 0x00, 0x2A]) {
            self = .tiff
        } else if has(Array("ftypavif".utf8), at: 4) || has(Array("ftypavis".utf8), at: 4) {
            self = .avif
        } else if has(Array("ftyp".utf8), at: 4) {
            self = .heif
        } else {
            return nil
        }
    }

    /// Recognises the format of an in-memory file.
    public init?(sniffing bytes: [UInt8]) {
        guard let format = bytes.withUnsafeBytes({ ImageFormat(sniffing: $0) }) else { return nil }
        self = format
    }

    /// The lower-case name, e.g. `jpeg`.
    public var description: String { rawValue }
}
