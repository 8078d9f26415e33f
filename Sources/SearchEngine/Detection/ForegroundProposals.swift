import ImageOps

/// Objects on a plain background: the picture's border is (nearly) one
/// colour, and every group of pixels that differs from it is an object.
///
/// On a copy whose longer side is ``workingSide``: the background is the
/// median colour of the outer ring (``ringShare`` of the shorter side, at
/// least two pixels); the background is plain when at least
/// ``uniformShare`` of the ring lies within ``tolerance`` of it in every
/// channel (a transparent ring is plain too: then every opaque pixel is
/// foreground). Foreground pixels — further than ``tolerance`` in some
/// channel — are grouped into 8-connected components after growing each by
/// ``gapShare`` of the longer side, so the parts of one object a narrow
/// gap separates (a pair of shoes, a drawing's strokes) stay one. Each
/// component's box is the tight box of its own foreground pixels; a
/// component smaller than ``minimumShare`` of the picture is noise.
///
/// The multi-object generalisation of ``ObjectProposal`` (which keeps the
/// largest component away from the edges, for a product placed on a page).
public struct ForegroundProposals: Sendable, Hashable {
    /// The longer side of the working copy.
    public var workingSide = 320
    /// The ring's width as a share of the shorter side.
    public var ringShare = 0.02
    /// Largest channel difference (0...255) that is still background.
    public var tolerance = 28
    /// The share of the ring within ``tolerance`` that makes the background plain.
    public var uniformShare = 0.9
    /// How far foreground pixels are grown before grouping, as a share of the longer side.
    public var gapShare = 0.015
    /// The smallest box, as a share of the picture's area.
    public var minimumShare = 0.004

    public init() {}

    /// One proposed object.
    public struct Proposal: Sendable, Hashable {
        /// Its box in the picture's pixels.
        public var region: PixelRect
        /// The share of the box its foreground pixels fill.
        public var fill: Double
    }

    /// The objects of `image` when its background is plain; nil when it is
    /// not (a photograph: see ``ActivationProposals``). Largest first.
    public func proposals(in image: PixelBuffer) -> [Proposal]? {
        guard image.width >= 8, image.height >= 8 else { return nil }
        let scale = min(1, Double(workingSide) / Double(max(image.width, image.height)))
        let small: PixelBuffer
        if scale < 1 {
            let size = PixelSize(width: max(8, Int((Double(image.width) * scale).rounded())),
                                 height: max(8, Int((Double(image.height) * scale).rounded())))
            guard let resized = try? ImageProcessors.Resize(to: size, filter: .box).process(image) else { return nil }
            small = resized
        } else {
            small = image
        }
        guard let mask = foreground(of: small) else { return nil }
        let width = small.width, height = small.height
        let grow = max(1, Int((gapShare * Double(max(width, height))).rounded()))
        let components = Self.components(of: mask, width: width, height: height, grow: grow)
        let area = Double(width * height)
        return components
            .filter { Double($0.rect.width * $0.rect.height) >= minimumShare * area && $0.pixels >= 4 }
            .sorted { $0.rect.width * $0.rect.height > $1.rect.width * $1.rect.height }
            .map { Proposal(region: $0.rect.rescaled(from: small.size, to: image.size),
                            fill: Double($0.pixels) / Double($0.rect.width * $0.rect.height)) }
    }

    /// The foreground mask of a plain picture; nil when the ring is not plain.
    func foreground(of image: PixelBuffer) -> [Bool]? {
        let width = image.width, height = image.height
        let ring = max(2, Int((ringShare * Double(min(width, height))).rounded()))
        return image.bytes.withUnsafeBufferPointer { pixels -> [Bool]? in
            var histogram = ColourHistogram()
            var transparent = 0, total = 0
            func inRing(_ x: Int, _ y: Int) -> Bool { x < ring || y < ring || x >= width - ring || y >= height - ring }
            for y in 0..<height {
                for x in 0..<width where inRing(x, y) {
                    let index = (y * width + x) * 4
                    total += 1
                    if image.hasAlpha && pixels[index + 3] < 128 { transparent += 1; continue }
                    histogram.add(pixels[index], pixels[index + 1], pixels[index + 2])
                }
            }
            guard total > 0 else { return nil }
            let clear = image.hasAlpha && Double(transparent) >= uniformShare * Double(total)
            var background = (red: 0, green: 0, blue: 0)
            if !clear {
                guard histogram.total > 0 else { return nil }
                background = histogram.median
                var near = transparent
                for y in 0..<height {
                    for x in 0..<width where inRing(x, y) {
                        let index = (y * width + x) * 4
                        if image.hasAlpha && pixels[index + 3] < 128 { continue }
                        if isNear(pixels, index, background) { near += 1 }
                    }
                }
                guard Double(near) >= uniformShare * Double(total) else { return nil }
            }
            var mask = [Bool](repeating: false, count: width * height)
            for pixel in 0..<(width * height) {
                let index = pixel * 4
                if image.hasAlpha && pixels[index + 3] < 128 { continue }
                mask[pixel] = clear || !isNear(pixels, index, background)
            }
            return mask
        }
    }

    func isNear(_ pixels: UnsafeBufferPointer<UInt8>, _ index: Int, _ colour: (red: Int, green: Int, blue: Int)) -> Bool {
        abs(Int(pixels[index]) - colour.red) <= tolerance && abs(Int(pixels[index + 1]) - colour.green) <= tolerance
            && abs(Int(pixels[index + 2]) - colour.blue) <= tolerance
    }

    /// The components of `mask` when each set pixel reaches `grow` pixels
    /// (a square) further: each component's tight box over the mask's own
    /// pixels and their count.
    static func components(of mask: [Bool], width: Int, height: Int, grow: Int) -> [(rect: PixelRect, pixels: Int)] {
        // Grow: a separable box dilation (rows, then columns) with running counts.
        var rows = [Bool](repeating: false, count: width * height)
        for y in 0..<height {
            var count = 0
            let base = y * width
            for x in 0..<min(width, grow) where mask[base + x] { count += 1 }
            for x in 0..<width {
                if x + grow < width, mask[base + x + grow] { count += 1 }
                if x - grow - 1 >= 0, mask[base + x - grow - 1] { count -= 1 }
                rows[base + x] = count > 0
            }
        }
        var grown = [Bool](repeating: false, count: width * height)
        for x in 0..<width {
            var count = 0
            for y in 0..<min(height, grow) where rows[y * width + x] { count += 1 }
            for y in 0..<height {
                if y + grow < height, rows[(y + grow) * width + x] { count += 1 }
                if y - grow - 1 >= 0, rows[(y - grow - 1) * width + x] { count -= 1 }
                grown[y * width + x] = count > 0
            }
        }
        var label = [Int32](repeating: 0, count: width * height)
        var stack: [Int] = []
        var found: [(rect: PixelRect, pixels: Int)] = []
        var next: Int32 = 0
        for start in 0..<(width * height) where grown[start] && label[start] == 0 {
            next += 1
            label[start] = next
            stack.append(start)
            var minX = width, minY = height, maxX = -1, maxY = -1, pixels = 0
            while let index = stack.popLast() {
                let x = index % width, y = index / width
                if mask[index] {
                    pixels += 1
                    minX = min(minX, x); maxX = max(maxX, x); minY = min(minY, y); maxY = max(maxY, y)
                }
                for ny in max(0, y - 1)...min(height - 1, y + 1) {
                    for nx in max(0, x - 1)...min(width - 1, x + 1) {
                        let neighbour = ny * width + nx
                        if grown[neighbour] && label[neighbour] == 0 {
                            label[neighbour] = next
                            stack.append(neighbour)
                        }
                    }
                }
            }
            if pixels > 0 {
                found.append((PixelRect(x: minX, y: minY, width: maxX - minX + 1, height: maxY - minY + 1), pixels))
            }
        }
        return found
    }
}
