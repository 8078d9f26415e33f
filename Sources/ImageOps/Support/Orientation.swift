/// The EXIF orientation of a stored image: how to turn the stored pixels so
/// they appear upright. Raw values are the EXIF tag's 1...8.
///
/// Decoders apply it by default, so a decoded image's width and height are
/// as displayed.
public enum Orientation: Int, Sendable, Hashable, Codable, CaseIterable {
    /// Stored upright.
    case up = 1
    /// Mirrored left to right.
    case upMirrored = 2
    /// Rotated 180°.
    case down = 3
    /// Mirrored top to bottom.
    case downMirrored = 4
    /// Mirrored along the main diagonal (transpose).
    case leftMirrored = 5
    /// Displayed rotated 90° clockwise.
    case right = 6
    /// Mirrored along the anti-diagonal (transverse).
    case rightMirrored = 7
    /// Displayed rotated 90° counter-clockwise.
    case left = 8

    /// Whether displaying the image swaps width and height (orientations 5–8).
    public var swapsDimensions: Bool { rawValue >= 5 }

    /// The displayed size of a stored image of `size`.
    public func displayedSize(of size: PixelSize) -> PixelSize {
        swapsDimensions ? size.transposed : size
    }

    /// The stored pixel that shows at displayed position `(x, y)`, for a stored image of `stored` size.
    func sourcePosition(x: Int, y: Int, stored: PixelSize) -> (x: Int, y: Int) {
        let w = stored.width, h = stored.height
        switch self {
        case .up: return (x, y)
        case .upMirrored: return (w - 1 - x, y)
        case .down: return (w - 1 - x, h - 1 - y)
        case .downMirrored: return (x, h - 1 - y)
        case .leftMirrored: return (y, x)
        case .right: return (y, h - 1 - x)
        case .rightMirrored: return (w - 1 - y, h - 1 - x)
        case .left: return (w - 1 - y, x)
        }
    }
}
