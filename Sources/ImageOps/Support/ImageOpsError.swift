/// Everything that can go wrong in ImageOps. Every case names the input
/// (`source`: a file path, or a label the caller chose such as `"upload"`)
/// and the problem, and ``description`` reads as a sentence a user can act on.
///
/// ```swift
/// do { _ = try ImageDecoder.decode(fileAt: path) }
/// catch { print(error) } // "photo.jpg: truncated JPEG: Premature end of JPEG file"
/// ```
public enum ImageOpsError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Which limit of ``ImageLimits`` an input exceeded.
    public enum Limit: Sendable, Hashable {
        /// width × height declared by the header exceeds the pixel limit.
        case pixels(width: Int, height: Int, maximum: Int)
        /// A side exceeds the side limit.
        case side(width: Int, height: Int, maximum: Int)
        /// The encoded input is larger than allowed.
        case inputBytes(Int, maximum: Int)
        /// Decoding an animation's first frame would hold `pixelsHeld` pixels at
        /// once (its `width`×`height` canvas and the frame's own buffer,
        /// ``ImageHeader/Animation/pixelsHeld``), beyond the pixel limit.
        case animation(width: Int, height: Int, frames: Int, pixelsHeld: Int, maximum: Int)
    }

    /// The input is empty (zero bytes).
    case emptyInput(source: String)
    /// The bytes are not an image format vsearch recognises.
    case unrecognisedFormat(source: String, magic: [UInt8])
    /// The bytes are a known image format that vsearch does not decode (BMP, TIFF).
    case unsupportedFormat(source: String, format: ImageFormat)
    /// The header declares a width or height vsearch cannot use (such as 0).
    case invalidDimensions(source: String, width: Int, height: Int)
    /// The input exceeds a limit; nothing was allocated for its pixels.
    case limitExceeded(source: String, limit: Limit)
    /// The data ends before the image does.
    case truncated(source: String, format: ImageFormat, reason: String)
    /// The codec rejected the data; `reason` is the codec's own message.
    case corrupt(source: String, format: ImageFormat, reason: String)
    /// Encoding failed; `reason` is the codec's own message.
    case encodingFailed(format: ImageFormat, reason: String)
    /// A box is malformed or does not overlap the image.
    case invalidBox(PixelBox, reason: String)
    /// A parameter is out of its documented range.
    case invalidParameter(name: String, reason: String)
    /// Reading or writing a file failed.
    case io(path: String, reason: String)

    /// A readable, single-line explanation naming the input.
    public var description: String {
        switch self {
        case .emptyInput(let source):
            return "\(source): empty file (0 bytes), not an image"
        case .unrecognisedFormat(let source, let magic):
            // Never the bytes themselves: the input may be a secret (a file or a response someone else controls).
            let looksLikeText = !magic.isEmpty && magic.prefix(8).allSatisfy { (0x20...0x7E).contains($0) || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
            let formats = ImageFormat.readable.map(\.displayName).joined(separator: ", ")
            return "\(source): not an image vsearch reads (\(formats)) (\(looksLikeText ? "it starts with text" : "unrecognised binary data"))"
        case .unsupportedFormat(let source, let format):
            let names = ImageFormat.readable.map(\.displayName)
            let formats = names.dropLast().joined(separator: ", ") + (names.count > 1 ? " and " : "") + (names.last ?? "")
            if let trait = format.packageTrait {
                // Known to vsearch, left out of this build by its package traits.
                return "\(source): unsupported format \(format.rawValue.uppercased()); this build of vsearch reads \(formats) — "
                    + "add the package trait \"\(trait)\" to the vsearch dependency, or convert it first"
            }
            return "\(source): unsupported format \(format.rawValue.uppercased()); vsearch reads \(formats) — convert it first"
        case .invalidDimensions(let source, let width, let height):
            return "\(source): the header declares an unusable size \(width)×\(height)"
        case .limitExceeded(let source, let limit):
            switch limit {
            case .pixels(let width, let height, let maximum):
                return "\(source): \(width)×\(height) exceeds the pixel limit of \(maximum) pixels (raise \(SettingName.maxPixels) if the image is genuine)"
            case .side(let width, let height, let maximum):
                return "\(source): \(width)×\(height) exceeds the side limit of \(maximum) pixels"
            case .inputBytes(let count, let maximum):
                return "\(source): \(count) bytes exceeds the input limit of \(maximum) bytes"
            case .animation(let width, let height, let frames, let pixelsHeld, let maximum):
                return "\(source): an animation of \(frames) frame\(frames == 1 ? "" : "s") on a \(width)×\(height) canvas holds \(pixelsHeld) pixels "
                    + "while its first frame is decoded, beyond the pixel limit of \(maximum) pixels (raise \(SettingName.maxPixels) if the image is genuine)"
            }
        case .truncated(let source, let format, let reason):
            return "\(source): truncated \(format.rawValue.uppercased()): \(reason)"
        case .corrupt(let source, let format, let reason):
            return "\(source): corrupt \(format.rawValue.uppercased()): \(reason)"
        case .encodingFailed(let format, let reason):
            return "\(format.rawValue.uppercased()) encoding failed: \(reason)"
        case .invalidBox(let box, let reason):
            return "invalid box \(box): \(reason)"
        case .invalidParameter(let name, let reason):
            return "invalid \(name): \(reason)"
        case .io(let path, let reason):
            return "\(path): \(reason)"
        }
    }
}
