extension ImageProcessors {
    /// Turns stored pixels upright according to an EXIF ``Orientation``.
    public struct Orient: ImageProcessing {
        /// The orientation of the input.
        public var orientation: Orientation

        /// Creates the step.
        public init(_ orientation: Orientation) { self.orientation = orientation }

        /// `vsearch.orient?o=N`.
        public var identifier: String { "vsearch.orient?o=\(orientation.rawValue)" }

        public func process(_ image: PixelBuffer) throws(ImageOpsError) -> PixelBuffer { apply(to: image) }

        /// Applies the orientation; never fails.
        public func apply(to image: PixelBuffer) -> PixelBuffer {
            guard orientation != .up else { return image }
            let stored = image.size
            let out = orientation.displayedSize(of: stored)
            let orientation = self.orientation
            return PixelBuffer(width: out.width, height: out.height, hasAlpha: image.hasAlpha) { dst in
                image.bytes.withUnsafeBytes { srcRaw in
                    let src = srcRaw.bindMemory(to: UInt32.self)
                    let dstRaw = UnsafeMutableRawBufferPointer(dst)
                    let target = dstRaw.bindMemory(to: UInt32.self)
                    // Tiles keep both the reads and the writes of quarter turns in cache.
                    let tile = 64
                    for tileY in stride(from: 0, to: out.height, by: tile) {
                        for tileX in stride(from: 0, to: out.width, by: tile) {
                            for y in tileY..<min(tileY + tile, out.height) {
                                for x in tileX..<min(tileX + tile, out.width) {
                                    let from = orientation.sourcePosition(x: x, y: y, stored: stored)
                                    target[y * out.width + x] = src[from.y * stored.width + from.x]
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
