import ImageOps

/// Objects on a plain background: the picture's border is (nearly) one
/// colour, and every group of pixels that differs from it is an object.
///
/// On a copy whose longer side is at most ``workingSide`` (area average): the
/// ring is the outer ``ringShare`` of the longer side (at least a pixel); the
/// background is the ring's per-channel median; a pixel's difference is its
/// largest channel difference from it. The background is plain when at least
/// ``uniformShare`` of the ring differs by at most ``tolerance`` — or each
/// of its four corners does (a product reaching the edges). Foreground
/// pixels (differing by more) are grouped into 8-connected components after
/// growing each by ``gapShare`` of the longer side — the parts of one thing a
/// narrow gap separates stay one — and each component's box is the tight box
/// of its own foreground pixels; components with fewer pixels than
/// ``minimumShare`` of the copy are noise. The constants were chosen on the
/// detection set's tune split (docs/decisions.md, "Object detection").
///
/// The multi-object generalisation of ``ObjectProposal`` (which keeps the
/// largest component away from the edges, for a product placed on a page).
public struct ForegroundProposals: Sendable, Hashable {
    /// The longer side of the working copy.
    public var workingSide = 320
    /// The ring's width as a share of the copy's longer side.
    public var ringShare = 0.02
    /// Largest channel difference (0...255) that is still background.
    public var tolerance = 40
    /// The share of the ring within ``tolerance`` that makes the background plain.
    public var uniformShare = 0.9
    /// How far foreground pixels are grown before grouping, as a share of the longer side.
    public var gapShare = 0.005
    /// The fewest foreground pixels of a component, as a share of the copy's pixels.
    public var minimumShare = 0.002
    /// The corner squares' side, as a share of the shorter side (``cornersAreBackground(_:width:height:difference:)``).
    public var cornerShare = 0.06

    public init() {}

    /// One proposed object.
    public struct Proposal: Sendable, Hashable {
        /// Its box in the picture's pixels.
        public var region: PixelRect
        /// The share of the box its foreground pixels fill.
        public var fill: Double
        /// Its foreground pixels on the working copy, and the box there (for splitting it).
        var pixels: Int
        var workingBox: PixelRect
    }

    /// What the plain path saw: the working copy's size and scale, and its foreground.
    struct Analysis: Sendable {
        var mask: BinaryMask
        /// Working copy pixels per picture pixel (≤ 1).
        var scale: Double
        var proposals: [Proposal]
    }

    /// The objects of `image` (alpha flattened) when its background is plain,
    /// largest first; nil when it is not (a photograph: see ``ContrastWindows``).
    public func proposals(in image: PixelBuffer) -> [Proposal]? {
        analyse(image)?.proposals
    }

    func analyse(_ image: PixelBuffer) -> Analysis? {
        guard image.width >= 8, image.height >= 8 else { return nil }
        let (small, scale) = Self.reduced(image.hasAlpha ? image.flattened() : image, longSide: workingSide)
        let width = small.width, height = small.height
        let ring = max(1, Int((ringShare * Double(max(width, height))).rounded(.toNearestOrEven)))
        let pixels = small.bytes
        func inRing(_ x: Int, _ y: Int) -> Bool { x < ring || y < ring || x >= width - ring || y >= height - ring }
        var histograms = [[Int]](repeating: [Int](repeating: 0, count: 256), count: 3)
        var total = 0
        for y in 0..<height {
            for x in 0..<width where inRing(x, y) {
                let index = (y * width + x) * 4
                for channel in 0..<3 { histograms[channel][Int(pixels[index + channel])] += 1 }
                total += 1
            }
        }
        guard total > 0 else { return nil }
        let background = histograms.map { Self.median($0, count: total) }
        func difference(_ index: Int) -> Int {
            max(abs(Int(pixels[index]) - background[0]), abs(Int(pixels[index + 1]) - background[1]), abs(Int(pixels[index + 2]) - background[2]))
        }
        var near = 0
        for y in 0..<height {
            for x in 0..<width where inRing(x, y) && difference((y * width + x) * 4) <= tolerance { near += 1 }
        }
        guard Double(near) >= uniformShare * Double(total) || cornersAreBackground(pixels, width: width, height: height, difference: difference)
        else { return nil }
        var mask = BinaryMask(width: width, height: height)
        for pixel in 0..<(width * height) { mask.bits[pixel] = difference(pixel * 4) > tolerance }
        let grow = Int((gapShare * Double(max(width, height))).rounded(.toNearestOrEven))
        let minimum = minimumShare * Double(width * height)
        let found = mask.dilated(by: grow).components(counting: mask)
            .filter { Double($0.count) >= minimum }
            .map { component -> Proposal in
                let box = PixelRect(x: component.minX, y: component.minY, width: component.width, height: component.height)
                return Proposal(region: box.unscaled(by: scale, within: image.size),
                                fill: Double(component.count) / Double(box.width * box.height), pixels: component.count, workingBox: box)
            }
            .sorted { $0.region.width * $0.region.height > $1.region.width * $1.region.height }
        return Analysis(mask: mask, scale: scale, proposals: found)
    }

    /// Whether each of the four corner squares (``cornerShare`` of the shorter
    /// side) is at least ``uniformShare`` background: a product shot whose
    /// product reaches the edges (a hat's brim, a sleeve) still has a plain
    /// background where the edges meet.
    func cornersAreBackground(_ pixels: [UInt8], width: Int, height: Int, difference: (Int) -> Int) -> Bool {
        let side = max(2, Int((cornerShare * Double(min(width, height))).rounded(.toNearestOrEven)))
        guard side * 2 <= min(width, height) else { return false }
        for (left, top) in [(0, 0), (width - side, 0), (0, height - side), (width - side, height - side)] {
            var near = 0
            for y in top..<(top + side) { for x in left..<(left + side) where difference((y * width + x) * 4) <= tolerance { near += 1 } }
            if Double(near) < uniformShare * Double(side * side) { return false }
        }
        return true
    }

    /// The median of a histogram's `count` values; the mean of the two middle ones when `count` is even, truncated.
    static func median(_ histogram: [Int], count: Int) -> Int {
        func value(at rank: Int) -> Int {
            var seen = 0
            for (value, n) in histogram.enumerated() {
                seen += n
                if seen > rank { return value }
            }
            return histogram.count - 1
        }
        return count % 2 == 1 ? value(at: count / 2) : (value(at: count / 2 - 1) + value(at: count / 2)) / 2
    }

    /// `image` with its longer side at most `longSide` (area average, never enlarged), and the scale applied.
    static func reduced(_ image: PixelBuffer, longSide: Int) -> (PixelBuffer, Double) {
        let scale = min(1, Double(longSide) / Double(max(image.width, image.height)))
        guard scale < 1 else { return (image, 1) }
        let size = PixelSize(width: max(1, Int((Double(image.width) * scale).rounded(.toNearestOrEven))),
                             height: max(1, Int((Double(image.height) * scale).rounded(.toNearestOrEven))))
        return (Resampler.resample(image, to: size, filter: .box), scale)
    }
}

extension PixelRect {
    /// This rectangle of a copy made at `scale` (copy pixels per picture pixel) as a rectangle of the picture of `size`: outwards, clamped.
    func unscaled(by scale: Double, within size: PixelSize) -> PixelRect {
        let left = min(size.width - 1, max(0, Int((Double(x) / scale).rounded(.down))))
        let top = min(size.height - 1, max(0, Int((Double(y) / scale).rounded(.down))))
        let right = min(size.width, max(left + 1, Int((Double(x + width) / scale).rounded(.up))))
        let bottom = min(size.height, max(top + 1, Int((Double(y + height) / scale).rounded(.up))))
        return PixelRect(x: left, y: top, width: right - left, height: bottom - top)
    }
}
