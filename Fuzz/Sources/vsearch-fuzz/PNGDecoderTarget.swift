import ImageOps

/// `png`: ``ImageDecoders/PNG`` (libpng through the CPNGShim setjmp shim, the IHDR pre-check)
/// through ``ImageDecoderHarness``.
enum PNGDecoderTarget {
    /// The harness.
    static let target = FuzzTarget(
        name: "png",
        summary: "ImageDecoders.PNG readHeader + decode (strict full size; lenient; keepSourceProfile), ImageDecoder.readHeader(limits:) + decode",
        maximumInputLength: 64 * 1024,
        timeoutSeconds: 10,
        seedGlobs: ["Tests/Fixtures/badinput/**/*.png", "Tests/Fixtures/badinput/**/*.jpg"],
        run: { input in ImageDecoderHarness.run(input, with: ImageDecoders.PNG()) }
    )
}
