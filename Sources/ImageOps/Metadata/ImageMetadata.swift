/// The rights notice a source carries in its EXIF block — the only metadata
/// vsearch ever copies into an output, and only when asked
/// (``MetadataPolicy/copyright``). GPS, camera, maker notes, XMP, IPTC and
/// comments are never read into it and never written.
public struct ImageMetadata: Sendable, Hashable, Codable {
    /// EXIF Artist (0x013B): the photographer or creator.
    public var artist: String?
    /// EXIF Copyright (0x8298).
    public var copyright: String?

    /// Creates metadata; both fields `nil` by default.
    public init(artist: String? = nil, copyright: String? = nil) {
        self.artist = artist
        self.copyright = copyright
    }

    /// No artist and no copyright.
    public static let none = ImageMetadata()

    /// Whether neither field is set.
    public var isEmpty: Bool { artist == nil && copyright == nil }

    init(_ fields: EXIFReader.Fields) {
        self.init(artist: fields.artist, copyright: fields.copyright)
    }
}

/// What metadata an output keeps. Whatever the policy, orientation is applied
/// to the pixels and never copied, and location, camera and editing
/// metadata are dropped.
public enum MetadataPolicy: String, Sendable, Hashable, Codable, CaseIterable {
    /// Nothing: the default (thumbnails and uploads carry no EXIF, GPS, XMP or maker notes).
    case none
    /// The source's EXIF Artist and Copyright, in a minimal EXIF block of their own.
    case copyright
}

/// What an encoder embeds besides the pixels. Empty by default.
public struct OutputMetadata: Sendable, Hashable {
    /// An ICC profile describing the pixels (``ColorHandling/keepSourceProfile``), or `nil` for sRGB.
    public var colorProfile: ColorProfile?
    /// A rights notice to write as EXIF, or ``ImageMetadata/none``.
    public var rights: ImageMetadata

    /// Creates output metadata.
    public init(colorProfile: ColorProfile? = nil, rights: ImageMetadata = .none) {
        self.colorProfile = colorProfile
        self.rights = rights
    }

    /// Nothing but the pixels.
    public static let none = OutputMetadata()

    /// The EXIF (TIFF) block to embed, or `nil`.
    var exif: [UInt8]? { EXIFWriter.tiff(for: rights) }
}
