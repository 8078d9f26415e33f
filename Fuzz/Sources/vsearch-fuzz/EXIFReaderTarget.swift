@testable import ImageOps

/// `exif`: the hand-written EXIF walker (internal, hence `@testable`): the same bytes as a
/// JPEG's marker segments (Orientation in APP1, and the frame-header scan) and as a bare TIFF
/// structure.
enum EXIFReaderTarget {
    /// The harness.
    static let target = FuzzTarget(
        name: "exif",
        summary: "EXIFReader.orientation(inJPEG:), hasFrameHeader(inJPEG:), orientation(inTIFF:)",
        maximumInputLength: 4096,
        timeoutSeconds: 5,
        seedGlobs: [],
        run: { input in
            _ = EXIFReader.orientation(inJPEG: input)
            _ = EXIFReader.hasFrameHeader(inJPEG: input)
            _ = EXIFReader.orientation(inTIFF: input)
        }
    )
}
