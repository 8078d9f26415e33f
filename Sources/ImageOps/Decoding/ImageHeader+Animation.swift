extension ImageHeader {
    /// What an animation's header says about the cost of decoding it (issue 37):
    /// the decoders give the first frame on the canvas, and what that holds at
    /// once is the canvas plus the frame's own decoding buffer, whatever the
    /// file's size — a 92-byte animated WebP may declare a 5600×5600 canvas.
    ///
    /// ``ImageLimits/check(_:source:)`` refuses an animation whose
    /// ``pixelsHeld`` exceeds the pixel limit before anything is allocated, and
    /// ``ShrinkOnLoad/decodedPixelCount(of:minimumSize:)`` charges it in full
    /// (animations are not shrunk on load).
    public struct Animation: Sendable, Hashable, Codable {
        /// Frames in the file (as far as its chunks were read).
        public var frames: Int
        /// Where the first frame lies on the canvas.
        public var firstFrame: PixelRect
        /// Pixels held at once while the first frame is decoded: the canvas
        /// it is decoded onto, plus libwebp's own buffer for the frame
        /// (``frameBuffer``), overflow-checked (`Int.max` on overflow).
        public var pixelsHeld: Int

        /// What libwebp holds for a frame while decoding it, beside the output.
        public enum FrameBuffer: Sendable, Hashable, Codable {
            /// A lossless frame is decoded whole (4 bytes a pixel) before its rows are written: the frame's pixels.
            case whole
            /// A lossy frame with alpha keeps its alpha plane and the plane's decoding buffer (2 bytes a pixel): half the frame's pixels.
            case alphaPlane
            /// A lossy frame without alpha is decoded through a few rows of cache: nothing to speak of.
            case rows
        }

        /// The cost of decoding `firstFrame` onto a `canvas`-sized buffer;
        /// `frameBuffer` ``FrameBuffer/whole`` unless the frame's format is known.
        public init(frames: Int, firstFrame: PixelRect, canvas: PixelSize, frameBuffer: FrameBuffer = .whole) {
            self.frames = frames
            self.firstFrame = firstFrame
            let canvasPixels = canvas.pixelCount ?? .max
            let framePixels = firstFrame.size.pixelCount ?? .max
            let buffered = switch frameBuffer {
            case .whole: framePixels
            case .alphaPlane: framePixels / 2 + framePixels % 2
            case .rows: 0
            }
            let (sum, overflow) = canvasPixels.addingReportingOverflow(buffered)
            pixelsHeld = overflow ? .max : sum
        }
    }
}
