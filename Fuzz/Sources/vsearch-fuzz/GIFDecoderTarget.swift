import ImageOps

/// `gif`: ``ImageDecoders/GIF`` (giflib through a read callback: the records up to the first
/// frame, its placement on the logical screen, interlacing, transparency) through
/// ``ImageDecoderHarness``.
enum GIFDecoderTarget {
    /// The harness.
    static let target = FuzzTarget(
        name: "gif",
        summary: "ImageDecoders.GIF readHeader + decode (strict; lenient, shrink-on-load; keepSourceProfile), ImageDecoder.decode",
        maximumInputLength: 64 * 1024,
        timeoutSeconds: 10,
        seedGlobs: ["Tests/Fixtures/badinput/**/*.gif"],
        run: { input in ImageDecoderHarness.run(input, with: ImageDecoders.GIF()) }
    )
}
