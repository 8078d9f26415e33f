import ImageOps

/// Where the product probably is in a query image that shows more than the
/// product: a banner with a headline beside it, a screenshot of a shop page,
/// a drawing with a caption.
///
/// The background is the median colour of the image's outermost opaque
/// pixels; every opaque pixel more than ``tolerance`` away from it in some
/// channel is foreground (all of them when the surround is transparent). The foreground, grown by one pixel so a drawing's parts hold
/// together, is split into 8-connected components; the proposal is the
/// one with the largest bounding box that touches no edge of the image (page
/// chrome, bars and photographs touch the edges; a product placed on a page
/// does not), when that box covers at least ``minimumShare`` of the image
/// (boxes, not pixels: a line drawing on white is sparse). A photograph gives
/// no proposal.
///
/// A query searches with its proposal as well as with the whole image, and
/// each catalog image scores the better of the two (docs/decisions.md,
/// "Features that generalise"); catalog images are indexed whole.
public enum ObjectProposal {
    /// Largest channel difference (0...255) from the background that still counts as background.
    public static let tolerance = 40
    /// The smallest share of the image a proposal's box covers.
    public static let minimumShare: Float = 0.08

    /// The proposed rectangle, in `image`'s pixels; nil when there is none.
    public static func region(in image: PixelBuffer) -> PixelRect? {
        let width = image.width, height = image.height
        guard width >= 8, height >= 8 else { return nil }
        let foreground = mask(of: image)
        // Grow by one pixel (3×3).
        var grown = [Bool](repeating: false, count: width * height)
        for y in 0..<height {
            for x in 0..<width where foreground[y * width + x] {
                for ny in max(0, y - 1)...min(height - 1, y + 1) {
                    for nx in max(0, x - 1)...min(width - 1, x + 1) { grown[ny * width + nx] = true }
                }
            }
        }
        // Components by flood fill; the largest that touches no edge.
        var label = [Int32](repeating: 0, count: width * height)
        var stack: [Int] = []
        var best: (area: Int, rect: PixelRect)?
        var next: Int32 = 0
        for start in 0..<(width * height) where grown[start] && label[start] == 0 {
            next += 1
            label[start] = next
            stack.append(start)
            var minX = width, minY = height, maxX = -1, maxY = -1
            while let index = stack.popLast() {
                let x = index % width, y = index / width
                minX = min(minX, x); maxX = max(maxX, x); minY = min(minY, y); maxY = max(maxY, y)
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
            let touchesEdge = minX == 0 || minY == 0 || maxX == width - 1 || maxY == height - 1
            let area = (maxX - minX + 1) * (maxY - minY + 1)
            if !touchesEdge && area > (best?.area ?? 0) {
                // The bounding box without the pixel the growing added.
                best = (area, PixelRect(x: minX + 1, y: minY + 1, width: max(1, maxX - minX - 1), height: max(1, maxY - minY - 1)))
            }
        }
        guard let best, Float(best.area) >= minimumShare * Float(width * height) else { return nil }
        return best.rect
    }

    /// Foreground pixels: opaque and away from the background colour.
    static func mask(of image: PixelBuffer) -> [Bool] {
        let width = image.width, height = image.height
        return image.bytes.withUnsafeBufferPointer { pixels -> [Bool] in
            var ring = ColourHistogram()
            func add(_ x: Int, _ y: Int) {
                let index = (y * width + x) * 4
                if !image.hasAlpha || pixels[index + 3] >= 128 { ring.add(pixels[index], pixels[index + 1], pixels[index + 2]) }
            }
            for x in 0..<width { add(x, 0); add(x, height - 1) }
            for y in 1..<(height - 1) { add(0, y); add(width - 1, y) }
            // A transparent surround: every opaque pixel is foreground.
            let background = ring.total > 0 ? ring.median : (red: -1000, green: -1000, blue: -1000)
            var mask = [Bool](repeating: false, count: width * height)
            for pixel in 0..<(width * height) {
                let index = pixel * 4
                if image.hasAlpha && pixels[index + 3] < 128 { continue }
                mask[pixel] = abs(Int(pixels[index]) - background.red) > tolerance
                    || abs(Int(pixels[index + 1]) - background.green) > tolerance
                    || abs(Int(pixels[index + 2]) - background.blue) > tolerance
            }
            return mask
        }
    }
}

extension PixelRect {
    /// Whether `other` lies wholly inside this rectangle.
    func contains(_ other: PixelRect) -> Bool {
        other.x >= x && other.y >= y && other.x + other.width <= x + width && other.y + other.height <= y + height
    }

    /// Intersection over union with `other`, 0...1.
    func overlap(with other: PixelRect) -> Double {
        let ix = max(0, min(x + width, other.x + other.width) - max(x, other.x))
        let iy = max(0, min(y + height, other.y + other.height) - max(y, other.y))
        let intersection = Double(ix * iy)
        let union = Double(width * height + other.width * other.height) - intersection
        return union > 0 ? intersection / union : 0
    }
}
