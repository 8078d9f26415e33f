@testable import ImageOps

/// `exif`: the hand-written metadata walkers (internal, hence `@testable`): the same bytes as a
/// JPEG's marker segments (``JPEGSegments``: the EXIF APP1, the ICC profile joined from its APP2
/// chunks, the frame-header scan) and as a bare TIFF structure (``EXIFReader``: Orientation,
/// Artist and Copyright in IFD0).
enum EXIFReaderTarget {
    /// The harness.
    static let target = FuzzTarget(
        name: "exif",
        summary: "JPEGSegments.exif(in:), iccProfile(in:), hasFrameHeader(in:); EXIFReader.orientation(inJPEG:), fields(inTIFF:) on the input and on its APP1",
        maximumInputLength: 8192,
        timeoutSeconds: 5,
        seedGlobs: ["Tests/Fixtures/metadata/*.jpg"],
        run: { input in
            let orientation = EXIFReader.orientation(inJPEG: input)
            _ = JPEGSegments.hasFrameHeader(in: input)
            if let tiff = JPEGSegments.exif(in: input) {
                invariant(within(tiff, input), "the EXIF block lies outside the input")
                let fields = EXIFReader.fields(inTIFF: tiff)
                invariant(fields.orientation == orientation, "orientation(inJPEG:) disagrees with fields(inTIFF:) of its APP1")
                check(fields)
            } else {
                invariant(orientation == nil, "an orientation without an EXIF block")
            }
            switch JPEGSegments.iccProfile(in: input) {
            case .success(let profile)?:
                // Chunk payloads joined: never more bytes than the input holds.
                invariant(profile.count <= input.count, "an ICC profile of \(profile.count) bytes from \(input.count)")
                _ = ICCProfileHeader(profile)
            case .failure, nil:
                break
            }
            check(EXIFReader.fields(inTIFF: input))
        }
    )

    /// Whether `part` is a range of `whole`.
    static func within(_ part: UnsafeRawBufferPointer, _ whole: UnsafeRawBufferPointer) -> Bool {
        guard let start = part.baseAddress, let base = whole.baseAddress else { return part.isEmpty }
        return start >= base && start + part.count <= base + whole.count
    }

    /// Text fields are cut to ``EXIFReader/maximumTextLength`` bytes before decoding; each byte
    /// decodes to at most one character, and "; " joins the NUL-separated parts.
    static func check(_ fields: EXIFReader.Fields) {
        for text in [fields.artist, fields.copyright].compactMap({ $0 }) {
            invariant(!text.isEmpty, "an empty text field instead of nil")
            invariant(text.count <= EXIFReader.maximumTextLength * 2, "a text field of \(text.count) characters")
        }
    }
}
