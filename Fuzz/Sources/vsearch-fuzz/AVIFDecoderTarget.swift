import ImageOps

/// `avif`: ``ImageDecoders/AVIF`` (libavif with dav1d: the primary image or first frame,
/// `irot`/`imir`, ICC and CICP colour, the Exif payload) through ``ImageDecoderHarness``.
enum AVIFDecoderTarget {
    /// The harness.
    static let target = FuzzTarget(
        name: "avif",
        summary: "ImageDecoders.AVIF readHeader + decode (strict; lenient, shrink-on-load; keepSourceProfile), ImageDecoder.decode",
        maximumInputLength: 64 * 1024,
        timeoutSeconds: 10,
        seedGlobs: ["Tests/Fixtures/badinput/**/*.avif"],
        run: { input in ImageDecoderHarness.run(input, with: ImageDecoders.AVIF()) }
    )
}
