import Foundation

/// A selection box `x1,y1,x2,y2` in pixels, as the ViSearch API writes it:
/// (0,0) is the top-left corner of the (upright) image, (x1,y1) the box's
/// top-left corner and (x2,y2) its bottom-right corner, exclusive — the box
/// `0,0,100,100` covers 100×100 pixels.
///
/// A zero-size box (`x1 == x2` and `y1 == y2`) is a **point**, as the ViSearch
/// guide says; ``region(in:)`` turns it into a neighbourhood around the point.
///
/// ```swift
/// let box = try PixelBox(parsing: "10,20,200,300")
/// let rect = try box.region(in: PixelSize(width: 150, height: 400)) // clamped: x 10..<150
/// ```
public struct PixelBox: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Left edge.
    public var x1: Int
    /// Top edge.
    public var y1: Int
    /// Right edge (exclusive).
    public var x2: Int
    /// Bottom edge (exclusive).
    public var y2: Int

    /// Creates a box. The values are not validated until used; see ``region(in:)``.
    public init(x1: Int, y1: Int, x2: Int, y2: Int) {
        self.x1 = x1
        self.y1 = y1
        self.x2 = x2
        self.y2 = y2
    }

    /// Parses `"x1,y1,x2,y2"` (integers; spaces allowed).
    /// - Throws: ``ImageOpsError/invalidParameter(name:reason:)`` when the text
    ///   is not four integers, ``ImageOpsError/invalidBox(_:reason:)`` when
    ///   `x2 < x1` or `y2 < y1`.
    public init(parsing text: String) throws(ImageOpsError) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }
        let numbers = parts.compactMap { Int($0) }
        guard parts.count == 4, numbers.count == 4 else {
            throw .invalidParameter(name: "box", reason: "expected four integers x1,y1,x2,y2, got \"\(text)\"")
        }
        self.init(x1: numbers[0], y1: numbers[1], x2: numbers[2], y2: numbers[3])
        try validate()
    }

    /// Whether the box has zero size: the ViSearch guide treats it as a point.
    public var isPoint: Bool { x1 == x2 && y1 == y2 }

    /// Throws when the corners are out of order (`x2 < x1` or `y2 < y1`).
    public func validate() throws(ImageOpsError) {
        if x2 < x1 { throw .invalidBox(self, reason: "x2 (\(x2)) is left of x1 (\(x1))") }
        if y2 < y1 { throw .invalidBox(self, reason: "y2 (\(y2)) is above y1 (\(y1))") }
    }

    /// The pixel rectangle this box selects in an image of `size`.
    ///
    /// - A box that reaches past the edges is **clamped** to the image (SDKs
    ///   scale boxes with truncation, so off-by-a-few boxes are common).
    /// - A box that does not overlap the image at all is an error.
    /// - A point selects the square neighbourhood of side
    ///   `max(1, min(width, height) / 4)` centred on it, shifted to lie inside the image.
    /// - A line (zero width or zero height only) selects a one-pixel-wide strip.
    /// - Throws: ``ImageOpsError/invalidBox(_:reason:)``.
    public func region(in size: PixelSize) throws(ImageOpsError) -> PixelRect {
        try validate()
        if isPoint {
            guard x1 >= 0, y1 >= 0, x1 <= size.width, y1 <= size.height else {
                throw .invalidBox(self, reason: "the point lies outside the \(size) image")
            }
            let side = Swift.max(1, Swift.min(size.width, size.height) / 4)
            let x = Swift.min(Swift.max(0, x1 - side / 2), size.width - side)
            let y = Swift.min(Swift.max(0, y1 - side / 2), size.height - side)
            return PixelRect(x: x, y: y, width: side, height: side)
        }
        // A box starting at or beyond the far edge cannot overlap (and x1 + 1 cannot overflow below).
        guard x1 < size.width, y1 < size.height else {
            throw .invalidBox(self, reason: "it does not overlap the \(size) image")
        }
        let left = Swift.max(0, x1), top = Swift.max(0, y1)
        let right = Swift.min(size.width, Swift.max(x2, x1 + 1))
        let bottom = Swift.min(size.height, Swift.max(y2, y1 + 1))
        guard left < right, top < bottom else {
            throw .invalidBox(self, reason: "it does not overlap the \(size) image")
        }
        return PixelRect(x: left, y: top, width: right - left, height: bottom - top)
    }

    /// The box multiplied by `scale`, each coordinate truncated toward zero —
    /// exactly how the ViSearch SDKs carry a box into a resized upload.
    public func scaled(by scale: Double) -> PixelBox {
        PixelBox(x1: Int(Double(x1) * scale), y1: Int(Double(y1) * scale),
                 x2: Int(Double(x2) * scale), y2: Int(Double(y2) * scale))
    }

    /// `"x1,y1,x2,y2"`, the wire form.
    public var description: String { "\(x1),\(y1),\(x2),\(y2)" }
}

/// A non-empty pixel rectangle inside an image: origin plus size.
public struct PixelRect: Sendable, Hashable, Codable {
    /// Left column.
    public var x: Int
    /// Top row.
    public var y: Int
    /// Width, at least 1.
    public var width: Int
    /// Height, at least 1.
    public var height: Int

    /// Creates a rectangle.
    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// The rectangle's size.
    public var size: PixelSize { PixelSize(width: width, height: height) }
}
