import ImageOps

/// `jpeg`: ``ImageDecoders/JPEG`` (libjpeg-turbo's TurboJPEG API, the EXIF reader, CMYK
/// conversion, orientation) through ``ImageDecoderHarness``.
enum JPEGDecoderTarget {
    /// The harness.
    static let target = FuzzTarget(
        name: "jpeg",
        summary: "ImageDecoders.JPEG readHeader + decode (strict full size; lenient, shrink-on-load; keepSourceProfile), ImageDecoder.decode",
        maximumInputLength: 64 * 1024,
        timeoutSeconds: 10,
        seedGlobs: ["Tests/Fixtures/badinput/**/*.jpg", "Tests/Fixtures/badinput/**/*.png", "corpus/images/*.jpg"],
        run: { input in ImageDecoderHarness.run(input, with: ImageDecoders.JPEG()) }
    )
}
