/// Reads the few EXIF tags vsearch uses — Orientation (0x0112), Artist
/// (0x013B) and Copyright (0x8298) — from IFD0 of a TIFF structure (a JPEG's
/// APP1 `Exif`, a PNG's eXIf, a WebP's EXIF chunk, a HEIF/AVIF Exif item).
///
/// Every read is bounds-checked against the buffer; a malformed or missing
/// EXIF block yields empty fields (an image read as upright), never a crash.
enum EXIFReader {
    /// What IFD0 says.
    struct Fields: Hashable, Sendable {
        var orientation: Orientation?
        var artist: String?
        var copyright: String?
    }

    /// The orientation stored in a JPEG file, or `nil` when there is none or it is unreadable.
    static func orientation(inJPEG bytes: UnsafeRawBufferPointer) -> Orientation? {
        JPEGSegments.exif(in: bytes).flatMap { orientation(inTIFF: $0) }
    }

    /// The Orientation tag in IFD0 of a TIFF structure.
    static func orientation(inTIFF tiff: UnsafeRawBufferPointer) -> Orientation? {
        fields(inTIFF: tiff).orientation
    }

    /// Strings longer than this are cut (a copyright notice is a line, not a document).
    static let maximumTextLength = 2000

    /// Orientation, Artist and Copyright from IFD0 of a TIFF structure.
    static func fields(inTIFF tiff: UnsafeRawBufferPointer) -> Fields {
        var fields = Fields()
        guard tiff.count >= 8 else { return fields }
        let littleEndian: Bool
        switch (tiff[0], tiff[1]) {
        case (0x49, 0x49): littleEndian = true
        case (0x4D, 0x4D): littleEndian = false
        default: return fields
        }
        func u16(_ at: Int) -> Int? {
            guard at >= 0, at + 2 <= tiff.count else { return nil }
            return littleEndian ? Int(tiff[at]) | Int(tiff[at + 1]) << 8 : Int(tiff[at]) << 8 | Int(tiff[at + 1])
        }
        func u32(_ at: Int) -> Int? {
            guard let low = u16(littleEndian ? at : at + 2), let high = u16(littleEndian ? at + 2 : at) else { return nil }
            return high << 16 | low
        }
        func ascii(entry at: Int) -> String? {
            guard u16(at + 2) == 2, let count = u32(at + 4), count > 0 else { return nil }
            let start = count <= 4 ? at + 8 : u32(at + 8) ?? -1
            guard start >= 0, count <= tiff.count, start <= tiff.count - count else { return nil }
            let raw = tiff[start..<(start + Swift.min(count, maximumTextLength))]
            // Several NUL-separated strings (photographer, editor) read as one line.
            let parts = raw.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            let text = parts.joined(separator: "; ").filter { !$0.isASCII || $0.asciiValue! >= 0x20 }
            return text.isEmpty ? nil : text
        }
        guard u16(2) == 42, let ifd = u32(4), let count = u16(ifd) else { return fields }
        for entry in 0..<Swift.min(count, 1000) {
            let at = ifd + 2 + entry * 12
            guard let tag = u16(at) else { break }
            switch tag {
            case 0x0112:
                if u16(at + 2) == 3, let value = u16(at + 8) { fields.orientation = Orientation(rawValue: value) }
            case 0x013B:
                fields.artist = ascii(entry: at)
            case 0x8298:
                fields.copyright = ascii(entry: at)
            default:
                break
            }
        }
        return fields
    }
}
