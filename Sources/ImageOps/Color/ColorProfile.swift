/// The colour space a source's pixels are in, as an ICC profile.
///
/// Every way a format declares colours ends here: an embedded profile (JPEG
/// APP2, PNG iCCP, WebP ICCP, HEIF/AVIF `colr prof`) is kept as it is;
/// primaries and a transfer function (PNG gAMA + cHRM, HEIF/AVIF `nclx`) are
/// turned into an equivalent profile by Little CMS (``RGBColorSpace``). A
/// source that declares sRGB, or nothing, has no profile: vsearch reads
/// untagged pixels as sRGB, as browsers and libvips do.
///
/// ```swift
/// let image = try ImageDecoder.decode(bytes, source: "photo.jpg",
///                                     options: DecodingOptions(colorHandling: .keepSourceProfile))
/// image.colorProfile?.header?.colorSpace // .rgb
/// image.colorProfile?.name               // "ProPhoto RGB"
/// ```
public struct ColorProfile: Sendable, Hashable {
    /// The ICC profile's bytes.
    public let iccData: [UInt8]

    /// Wraps ICC bytes as found in a file. Nothing is validated here: a
    /// profile Little CMS cannot use is reported when it is applied.
    public init(iccData: [UInt8]) {
        self.iccData = iccData
    }

    /// The fixed 128-byte header, or `nil` when the data is too short or its
    /// declared size or signature is wrong.
    public var header: ICCProfileHeader? { ICCProfileHeader(iccData) }

    /// The profile's description (its `desc` tag, e.g. "Adobe RGB (1998)"),
    /// when Little CMS can read it.
    public var name: String? { LittleCMS.description(of: iccData) }
}

/// The fixed header of an ICC profile (ICC.1:2010, section 7.2): what the
/// profile converts from, read without Little CMS and with every field
/// bounds-checked.
public struct ICCProfileHeader: Sendable, Hashable {
    /// The data colour space of an ICC profile (the `colorSpace` field).
    public enum ColorSpace: Sendable, Hashable, CustomStringConvertible {
        /// `RGB `.
        case rgb
        /// `GRAY`.
        case gray
        /// `CMYK`.
        case cmyk
        /// Any other signature (Lab, XYZ, multi-channel…), as four characters.
        case other(String)

        /// The four-character signature.
        public var description: String {
            switch self {
            case .rgb: "RGB"
            case .gray: "GRAY"
            case .cmyk: "CMYK"
            case .other(let signature): signature
            }
        }
    }

    /// The size the header declares, in bytes.
    public var declaredSize: Int
    /// The colour space of the data the profile describes.
    public var colorSpace: ColorSpace
    /// The profile class: `mntr` (display), `scnr` (input), `prtr` (output), `spac`, `link`, `abst`, `nmcl`.
    public var profileClass: String
    /// The version, e.g. `2.1` or `4.3`.
    public var version: String

    /// Parses the header; `nil` unless the data holds at least the 128-byte
    /// header and a tag count, the `acsp` signature is present, and the
    /// declared size is within the data.
    public init?(_ data: [UInt8]) {
        guard data.count >= 132 else { return nil }
        func u32(_ at: Int) -> Int { Int(data[at]) << 24 | Int(data[at + 1]) << 16 | Int(data[at + 2]) << 8 | Int(data[at + 3]) }
        func signature(_ at: Int) -> String {
            String(decoding: data[at..<(at + 4)].map { (0x20...0x7E).contains($0) ? $0 : 0x3F }, as: UTF8.self)
        }
        guard signature(36) == "acsp" else { return nil }
        let size = u32(0)
        guard size >= 132, size <= data.count else { return nil }
        declaredSize = size
        switch signature(16) {
        case "RGB ": colorSpace = .rgb
        case "GRAY": colorSpace = .gray
        case "CMYK": colorSpace = .cmyk
        case let other: colorSpace = .other(other.trimmingTrailingSpaces)
        }
        profileClass = signature(12)
        version = "\(data[8]).\(data[9] >> 4)"
    }
}

extension String {
    fileprivate var trimmingTrailingSpaces: String {
        var copy = self
        while copy.last == " " { copy.removeLast() }
        return copy
    }
}

/// What a decoder does with a source's colour profile.
public enum ColorHandling: String, Sendable, Hashable, Codable, CaseIterable {
    /// Convert the pixels to sRGB with Little CMS (relative colorimetric, black
    /// point compensation), so they look as the profile means them to on an
    /// sRGB display; ``DecodedImage/colorProfile`` is then `nil`. The default.
    case convertToSRGB
    /// Keep the source's pixels and report its RGB profile in
    /// ``DecodedImage/colorProfile``, for an output that embeds it. Gray and
    /// CMYK sources are still converted (outputs are RGB).
    case keepSourceProfile
}
