@testable import ImageOps

/// `icc`: the input as the bytes of an ICC profile, as a decoder finds it in a JPEG APP2, PNG
/// iCCP, WebP ICCP or HEIF/AVIF `colr` box: the bounds-checked header reader, the description
/// through Little CMS, and the sRGB conversion plan (internal, hence `@testable`) for every
/// source layout, whose transform is then applied to a few pixels.
enum ICCProfileTarget {
    /// Pixels each transform is applied to.
    static let pixelCount = 16

    /// The harness.
    static let target = FuzzTarget(
        name: "icc",
        summary: "ICCProfileHeader, ColorProfile.name, SRGBConversion.plan for rgba8/rgba16/invertedCMYK8/gray8 + ColorTransform.apply",
        maximumInputLength: 64 * 1024,
        timeoutSeconds: 10,
        // The system's profiles (colord, ghostscript): RGB v2 and v4, gray, CMYK, Lab.
        seedGlobs: ["/usr/share/color/icc/**/*.icc"],
        run: { input in run(Array(input)) }
    )

    static func run(_ data: [UInt8]) {
        if let header = ICCProfileHeader(data) {
            invariant(header.declaredSize >= 132 && header.declaredSize <= data.count,
                      "declared size \(header.declaredSize) of \(data.count) bytes")
        }
        let profile = ColorProfile(iccData: data)
        _ = profile.name
        let layouts: [LittleCMS.SourceLayout] = [.rgba8, .rgba16, .invertedCMYK8, .gray8]
        for layout in layouts {
            guard case .transform(let transform) = SRGBConversion.plan(for: profile, layout: layout) else { continue }
            invariant(transform.layout == layout, "a \(transform.layout) transform for \(layout)")
            invariant(profile.header != nil, "a transform from a profile without a valid header")
            // Input: a ramp, 8 bytes a pixel for rgba16, 4 otherwise; output: 8-bit RGBA.
            let inputStride = layout == .rgba16 ? 8 : 4
            let input = (0..<(pixelCount * inputStride)).map { UInt8(truncatingIfNeeded: $0 &* 37) }
            var output = [UInt8](repeating: 0, count: pixelCount * 4)
            input.withUnsafeBytes { source in
                output.withUnsafeMutableBufferPointer { transform.apply(source.baseAddress!, $0.baseAddress!, count: pixelCount) }
            }
            if layout == .rgba8 {
                for pixel in 0..<pixelCount {
                    invariant(output[pixel * 4 + 3] == input[pixel * 4 + 3], "alpha of pixel \(pixel) not copied")
                }
            }
            if layout != .rgba16 {
                // In place, as decoders apply it to their pixel buffer: the same colours (the gray
                // lookup leaves alpha alone, so only R, G and B are compared).
                var pixels = input
                pixels.withUnsafeMutableBufferPointer { transform.apply(UnsafeRawPointer($0.baseAddress!), $0.baseAddress!, count: pixelCount) }
                for index in pixels.indices where index % 4 != 3 {
                    invariant(pixels[index] == output[index], "in-place conversion differs at byte \(index) for \(layout)")
                }
            }
        }
    }
}
