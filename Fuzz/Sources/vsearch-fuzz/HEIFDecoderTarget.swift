import ImageOps

/// `heif`: ``ImageDecoders/HEIF`` (libheif with libde265: the primary image, `colr` ICC and nclx
/// profiles, the Exif item) through ``ImageDecoderHarness``.
enum HEIFDecoderTarget {
    /// The harness.
    static let target = FuzzTarget(
        name: "heif",
        summary: "ImageDecoders.HEIF readHeader + decode (strict; lenient, shrink-on-load; keepSourceProfile), ImageDecoder.decode",
        maximumInputLength: 64 * 1024,
        timeoutSeconds: 10,
        seedGlobs: ["Tests/Fixtures/badinput/**/*.heic", "Tests/Fixtures/colour/*.heic"],
        run: { input in ImageDecoderHarness.run(input, with: ImageDecoders.HEIF()) }
    )
}
