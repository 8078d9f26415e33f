import CTurboJPEG

extension ImageEncoders {
    /// Baseline JPEG through TurboJPEG.
    ///
    /// Chroma subsampling follows libvips: 4:2:0 below libjpeg quality 90,
    /// 4:4:4 at 90 and above (upload qualities 0.97/0.985 keep full colour
    /// resolution). Images with alpha are composited over white first, since
    /// JPEG has no alpha. An ICC profile is written as APP2 segments (several
    /// for a profile over 64 KB), a rights notice as a minimal EXIF APP1.
    ///
    /// ```swift
    /// let jpeg = try ImageEncoders.JPEG(quality: .thumbnail).encode(image)
    /// ```
    public struct JPEG: ImageEncoding {
        /// The quality. ``JPEGQuality/thumbnail`` (0.85) by default.
        public var quality: JPEGQuality
        /// Whether to write a progressive JPEG. `false` by default.
        public var isProgressive: Bool

        /// Creates the encoder.
        public init(quality: JPEGQuality = .thumbnail, isProgressive: Bool = false) {
            self.quality = quality
            self.isProgressive = isProgressive
        }

        /// ``ImageFormat/jpeg``.
        public var format: ImageFormat { .jpeg }

        public func encode(_ image: PixelBuffer, metadata: OutputMetadata) throws(ImageOpsError) -> [UInt8] {
            let opaque = image.flattened()
            guard let handle = tjInitCompress() else {
                throw .encodingFailed(format: .jpeg, reason: "libjpeg-turbo could not create a compressor")
            }
            defer { tjDestroy(handle) }
            let quality = self.quality.libjpegValue
            let subsampling = quality >= 90 ? TJSAMP_444 : TJSAMP_420
            let capacity = Int(tjBufSize(Int32(image.width), Int32(image.height), Int32(subsampling.rawValue)))
            guard capacity > 0 else { throw .encodingFailed(format: .jpeg, reason: "image too large for JPEG") }
            var flags = TJFLAG_NOREALLOC
            if isProgressive { flags |= TJFLAG_PROGRESSIVE }
            var failure: String?
            let output = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
                var destination = buffer.baseAddress
                var size = UInt(capacity)
                let status = opaque.bytes.withUnsafeBufferPointer { pixels in
                    tjCompress2(handle, pixels.baseAddress, Int32(image.width), Int32(image.bytesPerRow),
                                Int32(image.height), TJPF_RGBX.rawValue, &destination, &size,
                                Int32(subsampling.rawValue), Int32(quality), flags)
                }
                if status != 0 {
                    failure = tjGetErrorStr2(handle).map { String(cString: $0) } ?? "unknown libjpeg-turbo error"
                    count = 0
                } else {
                    count = Int(size)
                }
            }
            if let failure { throw .encodingFailed(format: .jpeg, reason: failure) }
            // TurboJPEG 2.1 writes no metadata; EXIF (APP1) and the ICC profile (APP2) go in after JFIF.
            var segments: [(marker: UInt8, payload: [UInt8])] = []
            if let exif = metadata.exif { segments.append((0xE1, JPEGSegments.exifSignature + exif)) }
            if let profile = metadata.colorProfile { segments += JPEGSegments.iccSegments(profile.iccData) }
            return JPEGSegments.inserting(segments, into: output)
        }
    }
}
