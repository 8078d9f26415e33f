import ImageOps

/// `png`: ``ImageDecoders/PNG`` — vsearch's own codec, CPNGCodec on libdeflate (issue 28): the
/// IHDR pre-check against the limits, chunks walked in place with their CRCs, iCCP/sRGB/gAMA/cHRM
/// and eXIf read, the image data inflated in one call, rows unfiltered (SSE2 for 3- and 4-byte
/// pixels), Adam7, palettes with tRNS, 16-bit samples scaled to 8 — through ``ImageDecoderHarness``.
///
/// The codec checks every chunk's CRC and refuses a bad critical chunk, so almost every mutation
/// of a PNG would stop at the first CRC. An input that is a PNG is therefore run a second time
/// with each complete chunk's CRC recomputed (``withCRCsFixed(_:)``), which lets the mutations
/// reach inflating, unfiltering and de-interlacing, as an attacker's file with correct CRCs would.
/// Its encoder is fuzzed by `png-roundtrip` (``PNGRoundTripTarget``).
enum PNGDecoderTarget {
    /// The harness.
    static let target = FuzzTarget(
        name: "png",
        summary: "ImageDecoders.PNG readHeader + decode (strict full size; lenient; keepSourceProfile), ImageDecoder.readHeader(limits:) + decode; again with chunk CRCs fixed",
        maximumInputLength: 64 * 1024,
        timeoutSeconds: 10,
        seedGlobs: ["Tests/Fixtures/badinput/**/*.png", "Tests/Fixtures/badinput/**/*.jpg"],
        run: { input in
            ImageDecoderHarness.run(input, with: ImageDecoders.PNG())
            if let fixed = withCRCsFixed(input) {
                fixed.withUnsafeBytes { ImageDecoderHarness.run($0, with: ImageDecoders.PNG()) }
            }
        }
    )

    /// The PNG signature.
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// The input with the CRC of every complete chunk (after the signature, up to the first chunk
    /// whose length runs past the end) recomputed; `nil` when the input is not a PNG or no CRC
    /// changed.
    static func withCRCsFixed(_ input: UnsafeRawBufferPointer) -> [UInt8]? {
        guard input.count >= signature.count, input.prefix(signature.count).elementsEqual(signature) else { return nil }
        var bytes = Array(input)
        var offset = signature.count
        var changed = false
        while bytes.count - offset >= 12 {
            let length = (0..<4).reduce(0) { $0 << 8 | Int(bytes[offset + $1]) }
            guard length <= bytes.count - offset - 12 else { break }
            let crcOffset = offset + 8 + length
            let crc = crc32(bytes[(offset + 4)..<crcOffset])  // over the type and the data
            for index in 0..<4 {
                let byte = UInt8(truncatingIfNeeded: crc >> (24 - 8 * index))
                if bytes[crcOffset + index] != byte { bytes[crcOffset + index] = byte; changed = true }
            }
            offset = crcOffset + 4
        }
        return changed ? bytes : nil
    }

    /// CRC-32 as PNG uses it (ISO 3309, reflected, polynomial 0xEDB88320).
    static func crc32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = crcTable[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }

    static let crcTable: [UInt32] = (0..<256).map { entry in
        var crc = UInt32(entry)
        for _ in 0..<8 { crc = crc & 1 != 0 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
        return crc
    }
}
