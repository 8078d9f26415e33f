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
        // Grown by one pixel (3×3) so a drawing's parts hold together; the largest component that touches no edge.
        let grown = BinaryMask(width: width, height: height, bits: mask(of: image)).dilated(by: 1)
        var best: (area: Int, rect: PixelRect)?
        for component in grown.components() {
            let touchesEdge = component.minX == 0 || component.minY == 0 || component.maxX == width || component.maxY == height
            let area = component.width * component.height
            if !touchesEdge && area > (best?.area ?? 0) {
                // The bounding box without the pixel the growing added.
                best = (area, PixelRect(x: component.minX + 1, y: component.minY + 1,
                                        width: max(1, component.width - 2), height: max(1, component.height - 2)))
            }
        }
        guard let best, Float(best.area) >= minimumShare * Float(width * height) else { return nil }
        return best.rect
    }

    /// Foreground pixels: opaque and away from the background colour.
    static func mask(of image: PixelBuffer) -> [Bool] {
        let width = image.width, height = image.height
        return image.bytes.withUnsafeBufferPointer { pixels -> [Bool] in
            var ring = ColorHistogram()
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
    public func overlap(with other: PixelRect) -> Double {
        let ix = max(0, min(x + width, other.x + other.width) - max(x, other.x))
        let iy = max(0, min(y + height, other.y + other.height) - max(y, other.y))
        let intersection = Double(ix * iy)
        let union = Double(width * height + other.width * other.height) - intersection
        return union > 0 ? intersection / union : 0
    }
}
