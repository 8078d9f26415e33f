import Foundation
import ImageOps

/// Objects on a photograph: windows whose colours differ most from a ring
/// around them, each refined to the pixels whose colours belong to it.
///
/// On a copy whose longer side is ``workingSide`` (area average), each
/// channel quantised to ``levels`` levels (``levels``³ colour bins) with
/// integral histograms: windows of every width and height from
/// ``smallestSide`` to ``largestSide`` of the picture's sides in steps of
/// ``sideStep``, at positions ``stride`` of the sides apart; each window's
/// contrast is the χ² distance between its colours and those of its ring
/// (the window grown by ``ringShare`` of its sides, clipped, minus the
/// window). Of each window size the ``perSize`` best positions are kept,
/// then ``NonMaximumSuppression`` at IoU 0.5, the first ``kept``. Each is
/// refined: over the window and its ring, a pixel is the object's when its
/// colour is likelier inside the window than in the ring (add-half
/// smoothing); after a 3×3 closing, the box of the largest 8-connected group
/// is the object's box. docs/decisions.md, "Object detection", has the
/// method's figures and what was tried instead.
public struct ContrastWindows: Sendable, Hashable {
    public var workingSide = 96
    public var levels = 5
    public var smallestSide = 0.12
    public var largestSide = 0.80
    public var sideStep = 0.07
    public var stride = 0.04
    public var ringShare = 0.25
    public var perSize = 4
    public var kept = 20

    public init() {}

    /// One refined window and what the score is made of (docs/decisions.md: the photographic path's features).
    struct Candidate: Sendable {
        /// The refined box in the picture's pixels.
        var region: PixelRect
        /// The window's contrast, before refinement.
        var windowContrast: Double
        /// The refined box's contrast against its own ring.
        var refinedContrast: Double
        /// The share of the refined box its largest group fills.
        var fill: Double
        /// IoU of the window and the refined box.
        var windowOverlap: Double
        /// Whether the refined box touches the working copy's border.
        var touchesBorder: Bool
        /// |ln(width / height)| of the refined box.
        var aspect: Double
    }

    /// The candidates of a picture (alpha flattened), best window first.
    func candidates(in image: PixelBuffer) -> [Candidate] {
        let (small, scale) = ForegroundProposals.reduced(image.hasAlpha ? image.flattened() : image, longSide: workingSide)
        let width = small.width, height = small.height, binCount = levels * levels * levels
        var bins = [Int](repeating: 0, count: width * height)
        for pixel in bins.indices {
            let q = (0..<3).map { Int(small.bytes[pixel * 4 + $0]) * levels / 256 }
            bins[pixel] = (q[0] * levels + q[1]) * levels + q[2]
        }
        let histograms = IntegralHistograms(bins: bins, width: width, height: height, binCount: binCount)
        func sides(_ length: Int) -> [Int] {
            var values = Set<Int>()
            var share = smallestSide
            while share <= largestSide + 1e-9 {
                values.insert(Int((share * Double(length)).rounded(.toNearestOrEven)))
                share += sideStep
            }
            return values.filter { $0 >= 1 && $0 <= length }.sorted()
        }
        let stepX = max(1, Int((stride * Double(width)).rounded(.toNearestOrEven)))
        let stepY = max(1, Int((stride * Double(height)).rounded(.toNearestOrEven)))
        var windows: [(box: PixelRect, contrast: Double)] = []
        for windowHeight in sides(height) {
            for windowWidth in sides(width) {
                var scored: [(box: PixelRect, contrast: Double)] = []
                for y in Swift.stride(from: 0, through: height - windowHeight, by: stepY) {
                    for x in Swift.stride(from: 0, through: width - windowWidth, by: stepX) {
                        let box = PixelRect(x: x, y: y, width: windowWidth, height: windowHeight)
                        scored.append((box, histograms.contrast(of: box, ringShare: ringShare, byArea: true)))
                    }
                }
                scored.sort { $0.contrast > $1.contrast }
                windows += scored.prefix(perSize)
            }
        }
        let best = NonMaximumSuppression.select(windows, region: \.box, score: { Float($0.contrast) }, overlap: 0.5, limit: kept)
        return best.map { window in
            let (box, fill) = refined(window.box, bins: bins, width: width, height: height, binCount: binCount)
            return Candidate(region: box.unscaled(by: scale, within: image.size), windowContrast: window.contrast,
                             refinedContrast: histograms.contrast(of: box, ringShare: ringShare, byArea: false), fill: fill,
                             windowOverlap: window.box.overlap(with: box),
                             touchesBorder: box.x <= 0 || box.y <= 0 || box.x + box.width >= width || box.y + box.height >= height,
                             aspect: abs(Foundation.log(Double(max(box.width, 1)) / Double(max(box.height, 1)))))
        }
    }

    /// The window shrunk or grown to its colours' largest group, and the share of that box the group fills.
    func refined(_ window: PixelRect, bins: [Int], width: Int, height: Int, binCount: Int) -> (PixelRect, Double) {
        let ry = Int((ringShare * Double(window.height)).rounded(.toNearestOrEven))
        let rx = Int((ringShare * Double(window.width)).rounded(.toNearestOrEven))
        let ox0 = max(0, window.x - rx), oy0 = max(0, window.y - ry)
        let ox1 = min(width, window.x + window.width + rx), oy1 = min(height, window.y + window.height + ry)
        var inner = [Double](repeating: 0, count: binCount), outer = inner
        for y in oy0..<oy1 {
            for x in ox0..<ox1 {
                let isInside = x >= window.x && x < window.x + window.width && y >= window.y && y < window.y + window.height
                if isInside { inner[bins[y * width + x]] += 1 } else { outer[bins[y * width + x]] += 1 }
            }
        }
        let innerTotal = inner.reduce(0, +) + 0.5 * Double(binCount), outerTotal = outer.reduce(0, +) + 0.5 * Double(binCount)
        let belongs = (0..<binCount).map { (inner[$0] + 0.5) / innerTotal > (outer[$0] + 0.5) / outerTotal }
        let regionWidth = ox1 - ox0, regionHeight = oy1 - oy0
        var mask = BinaryMask(width: regionWidth, height: regionHeight)
        for y in 0..<regionHeight { for x in 0..<regionWidth { mask[x, y] = belongs[bins[(oy0 + y) * width + ox0 + x]] } }
        let groups = mask.closed3x3().components()
        guard let largest = groups.max(by: { $0.count < $1.count }) else { return (window, 0) }
        let box = PixelRect(x: ox0 + largest.minX, y: oy0 + largest.minY, width: largest.width, height: largest.height)
        return (box, Double(largest.count) / Double(box.width * box.height))
    }
}

/// Colour-bin counts of every rectangle of a picture in four lookups: for
/// each pixel corner, the counts of each bin above and to the left of it.
struct IntegralHistograms: Sendable {
    let width: Int
    let height: Int
    let binCount: Int
    /// ((height + 1) × (width + 1)) corners × `binCount` bins.
    let counts: [Int32]

    init(bins: [Int], width: Int, height: Int, binCount: Int) {
        self.width = width
        self.height = height
        self.binCount = binCount
        let stride = (width + 1) * binCount
        var counts = [Int32](repeating: 0, count: (height + 1) * stride)
        var row = [Int32](repeating: 0, count: binCount)
        for y in 0..<height {
            for b in 0..<binCount { row[b] = 0 }
            for x in 0..<width {
                row[bins[y * width + x]] += 1
                let corner = (y + 1) * stride + (x + 1) * binCount, above = y * stride + (x + 1) * binCount
                for b in 0..<binCount { counts[corner + b] = counts[above + b] + row[b] }
            }
        }
        self.counts = counts
    }

    /// The bin counts of the rectangle from (x0, y0) to (x1, y1), exclusive, added into `into`.
    func add(_ x0: Int, _ y0: Int, _ x1: Int, _ y1: Int, sign: Int32, into histogram: inout [Int32]) {
        let stride = (width + 1) * binCount
        let a = y1 * stride + x1 * binCount, b = y0 * stride + x1 * binCount, c = y1 * stride + x0 * binCount, d = y0 * stride + x0 * binCount
        counts.withUnsafeBufferPointer { n in
            for bin in 0..<binCount { histogram[bin] += sign * (n[a + bin] - n[b + bin] - n[c + bin] + n[d + bin]) }
        }
    }

    /// χ² distance (½ Σ (p − q)² / (p + q)) between the box's colours and its
    /// ring's (the box grown by `ringShare` of its sides, clipped, minus the
    /// box); 0 when the ring is empty. The box's shares are of its area
    /// (`byArea`) or of its count.
    func contrast(of box: PixelRect, ringShare: Double, byArea: Bool) -> Double {
        let ry = Int((ringShare * Double(box.height)).rounded(.toNearestOrEven))
        let rx = Int((ringShare * Double(box.width)).rounded(.toNearestOrEven))
        let ox0 = max(0, box.x - rx), oy0 = max(0, box.y - ry)
        let ox1 = min(width, box.x + box.width + rx), oy1 = min(height, box.y + box.height + ry)
        var inner = [Int32](repeating: 0, count: binCount), ring = inner
        add(box.x, box.y, box.x + box.width, box.y + box.height, sign: 1, into: &inner)
        add(ox0, oy0, ox1, oy1, sign: 1, into: &ring)
        var ringTotal = 0.0, innerTotal = 0.0
        for bin in 0..<binCount {
            ring[bin] -= inner[bin]
            ringTotal += Double(ring[bin])
            innerTotal += Double(inner[bin])
        }
        guard ringTotal > 0 else { return 0 }
        let innerDivisor = byArea ? Double(box.width * box.height) : max(1, innerTotal)
        var chi = 0.0
        for bin in 0..<binCount {
            let p = Double(inner[bin]) / innerDivisor, q = Double(ring[bin]) / ringTotal
            if p + q > 0 { chi += (p - q) * (p - q) / (p + q) }
        }
        return chi / 2
    }
}
