import ImageOps

/// `webp`: ``ImageDecoders/WebP`` (libwebp: still images with its scaler for shrink-on-load, the
/// first frame of an animation through WebPAnimDecoder, the ICCP and EXIF chunks through
/// WebPDemux) through ``ImageDecoderHarness``.
enum WebPDecoderTarget {
    /// The harness.
    static let target = FuzzTarget(
        name: "webp",
        summary: "ImageDecoders.WebP readHeader + decode (strict; lenient, shrink-on-load; keepSourceProfile), ImageDecoder.decode",
        maximumInputLength: 64 * 1024,
        timeoutSeconds: 10,
        seedGlobs: ["Tests/Fixtures/badinput/**/*.webp", "Tests/Fixtures/colour/*.webp", "Tests/Fixtures/metadata/*.webp"],
        run: { input in ImageDecoderHarness.run(input, with: ImageDecoders.WebP()) }
    )
}
