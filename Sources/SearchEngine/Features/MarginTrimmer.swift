import ImageOps

/// Finds the content of an image inside uniform margins: borders, letterbox
/// bars, the white page around a drawing.
///
/// A pass looks at each side on its own: when the side's outermost line is
/// uniform (at least ``uniformShare`` of its pixels within ``tolerance`` of
/// its median colour, or that share transparent), it and every
/// following line of that colour are margin. Passes repeat — a border, the
/// blended line a resize leaves where it meets the page, then the white page
/// inside — until one removes nothing or would leave ``minimumSide`` pixels
/// or fewer, which is then not taken: a drawing in flat colours is never
/// trimmed away.
///
/// Catalog images and queries are trimmed alike before their features are
/// computed, so a copy with a border or bars of any colour and width compares
/// as its original does (docs/decisions.md, "Features that generalise").
///
/// ```swift
/// let content = MarginTrimmer.content(of: small)   // PixelRect inside `small`
/// ```
public enum MarginTrimmer {
    /// Largest difference of any channel (0...255) from the margin's colour that still counts as that colour.
    public static let tolerance = 24
    /// Share of a line's pixels that must be the line's colour.
    public static let uniformShare: Float = 0.98
    /// The content never shrinks to this many pixels on a side.
    static let minimumSide = 4
    /// Passes at most (a border, a blended line or two, the page inside, …).
    static let passes = 6

    /// The rectangle left after removing uniform margins; the whole image when there are none.
    public static func content(of image: PixelBuffer) -> PixelRect {
        image.bytes.withUnsafeBufferPointer { pixels -> PixelRect in
            let lines = LineReader(pixels: pixels, width: image.width, hasAlpha: image.hasAlpha)
            var rect = PixelRect(x: 0, y: 0, width: image.width, height: image.height)
            for _ in 0..<passes {
                let next = lines.trimmedOnce(rect)
                if next == rect || next.width <= minimumSide || next.height <= minimumSide { break }
                rect = next
            }
            return rect
        }
    }

    /// Reads lines of pixels and judges them.
    struct LineReader {
        let pixels: UnsafeBufferPointer<UInt8>
        let width: Int
        let hasAlpha: Bool

        /// One pass over the four sides of `rect`.
        func trimmedOnce(_ rect: PixelRect) -> PixelRect {
            let left = rect.x, right = rect.x + rect.width, top0 = rect.y, bottom0 = rect.y + rect.height
            let top = top0 + marginDepth(limit: rect.height) { row(top0 + $0, left, right) }
            let bottom = bottom0 - marginDepth(limit: bottom0 - top) { row(bottom0 - 1 - $0, left, right) }
            let newLeft = left + marginDepth(limit: rect.width) { column(left + $0, top, bottom) }
            let newRight = right - marginDepth(limit: right - newLeft) { column(right - 1 - $0, top, bottom) }
            return PixelRect(x: newLeft, y: top, width: max(0, newRight - newLeft), height: max(0, bottom - top))
        }

        /// Row `y` from column `start` to `end` (exclusive).
        func row(_ y: Int, _ start: Int, _ end: Int) -> Line {
            Line(start: (y * width + start) * 4, step: 4, count: end - start)
        }

        /// Column `x` from row `start` to `end` (exclusive).
        func column(_ x: Int, _ start: Int, _ end: Int) -> Line {
            Line(start: (start * width + x) * 4, step: width * 4, count: end - start)
        }

        /// A row or column: `count` pixels, the first at byte `start`, then every `step` bytes.
        struct Line {
            let start: Int
            let step: Int
            let count: Int
        }

        /// A margin's colour: transparent is a colour of its own, so a
        /// transparent margin never continues into the opaque product and an
        /// opaque one never through transparent pixels.
        enum Color: Equatable {
            case transparent
            case rgb(Int, Int, Int)
        }

        /// How many lines from a side inwards are margin (see ``MarginTrimmer``).
        func marginDepth(limit: Int, line: (Int) -> Line) -> Int {
            guard limit > 0, let color = uniformColor(line(0)) else { return 0 }
            var depth = 1
            while depth < limit, matches(line(depth), color) { depth += 1 }
            return depth
        }

        /// The line's colour when the line is uniform.
        func uniformColor(_ line: Line) -> Color? {
            var histogram = ColorHistogram()
            var index = line.start
            for _ in 0..<line.count {
                if !hasAlpha || pixels[index + 3] >= 128 { histogram.add(pixels[index], pixels[index + 1], pixels[index + 2]) }
                index += line.step
            }
            let transparent = line.count - histogram.total
            let color: Color
            if Float(transparent) >= Float(line.count) * MarginTrimmer.uniformShare {
                color = .transparent
            } else {
                let median = histogram.median
                color = .rgb(median.red, median.green, median.blue)
            }
            return matches(line, color) ? color : nil
        }

        /// Whether (almost) all of the line is `colour`.
        func matches(_ line: Line, _ color: Color) -> Bool {
            let allowed = line.count - Int((Float(line.count) * MarginTrimmer.uniformShare).rounded(.up))
            var outliers = 0
            var index = line.start
            for _ in 0..<line.count {
                let isTransparent = hasAlpha && pixels[index + 3] < 128
                let isOutlier: Bool
                switch color {
                case .transparent:
                    isOutlier = !isTransparent
                case .rgb(let red, let green, let blue):
                    isOutlier = isTransparent || abs(Int(pixels[index]) - red) > tolerance
                        || abs(Int(pixels[index + 1]) - green) > tolerance || abs(Int(pixels[index + 2]) - blue) > tolerance
                }
                if isOutlier {
                    outliers += 1
                    if outliers > allowed { return false }
                }
                index += line.step
            }
            return true
        }
    }
}
