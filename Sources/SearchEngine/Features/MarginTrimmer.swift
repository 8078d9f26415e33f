import ImageOps

/// Finds the content of an image inside uniform margins: borders, letterbox
/// bars, the white page around a drawing.
///
/// A pass looks at each side on its own: when the side's outermost line is
/// uniform (at least ``uniformShare`` of its pixels within ``tolerance`` of
/// its median colour; transparent pixels count as uniform), it and every
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
            Line(count: end - start) { (y * width + start + $0) * 4 }
        }

        /// Column `x` from row `start` to `end` (exclusive).
        func column(_ x: Int, _ start: Int, _ end: Int) -> Line {
            Line(count: end - start) { ((start + $0) * width + x) * 4 }
        }

        /// A row or column: `count` pixels at byte offsets `offset(i)`.
        struct Line {
            let count: Int
            let offset: (Int) -> Int
        }

        /// How many lines from a side inwards are margin (see ``MarginTrimmer``).
        func marginDepth(limit: Int, line: (Int) -> Line) -> Int {
            guard limit > 0, let colour = uniformColour(line(0)) else { return 0 }
            var depth = 1
            while depth < limit, matches(line(depth), colour) { depth += 1 }
            return depth
        }

        /// The line's median colour when the line is uniform.
        func uniformColour(_ line: Line) -> [Int]? {
            var histograms = [[Int]](repeating: [Int](repeating: 0, count: 256), count: 3)
            var opaque = 0
            for i in 0..<line.count {
                let index = line.offset(i)
                if hasAlpha && pixels[index + 3] < 128 { continue }
                histograms[0][Int(pixels[index])] += 1
                histograms[1][Int(pixels[index + 1])] += 1
                histograms[2][Int(pixels[index + 2])] += 1
                opaque += 1
            }
            if opaque == 0 { return [-1, -1, -1] }  // transparent: uniform, of "no colour"
            let median = histograms.map { Self.median($0, count: opaque) }
            return matches(line, median) ? median : nil
        }

        /// Whether (almost) all of the line is `colour` (transparent pixels always are).
        func matches(_ line: Line, _ colour: [Int]) -> Bool {
            let allowed = line.count - Int((Float(line.count) * MarginTrimmer.uniformShare).rounded(.up))
            var outliers = 0
            for i in 0..<line.count {
                let index = line.offset(i)
                if hasAlpha && pixels[index + 3] < 128 { continue }
                if colour[0] < 0 || abs(Int(pixels[index]) - colour[0]) > tolerance
                    || abs(Int(pixels[index + 1]) - colour[1]) > tolerance || abs(Int(pixels[index + 2]) - colour[2]) > tolerance {
                    outliers += 1
                    if outliers > allowed { return false }
                }
            }
            return true
        }

        static func median(_ histogram: [Int], count: Int) -> Int {
            var seen = 0
            for value in 0..<256 {
                seen += histogram[value]
                if seen * 2 >= count { return value }
            }
            return 255
        }
    }
}
