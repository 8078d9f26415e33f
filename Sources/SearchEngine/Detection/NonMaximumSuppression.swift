import ImageOps

/// Greedy non-maximum suppression: of boxes that overlap, the best-scored
/// one stays.
///
/// Boxes are visited from the highest score down (ties: the larger box, then
/// top-left first, so the outcome never depends on the input's order); a box
/// is dropped when its intersection over union with a box already kept
/// exceeds `overlap`, or when more than `containment` of the smaller of the
/// two lies inside the other (a part of an object proposed beside the whole).
public enum NonMaximumSuppression {
    /// The kept elements of `items`, best first, at most `limit`.
    public static func select<Item>(_ items: [Item], region: (Item) -> PixelRect, score: (Item) -> Float,
                                    overlap: Double = 0.5, containment: Double = 1.0, limit: Int = .max) -> [Item] {
        let order = items.indices.sorted { a, b in
            let sa = score(items[a]), sb = score(items[b])
            if sa != sb { return sa > sb }
            let ra = region(items[a]), rb = region(items[b])
            if ra.width * ra.height != rb.width * rb.height { return ra.width * ra.height > rb.width * rb.height }
            return (ra.y, ra.x) < (rb.y, rb.x)
        }
        var kept: [Item] = []
        for index in order where kept.count < limit {
            let candidate = region(items[index])
            let suppressed = kept.contains { other in
                let box = region(other)
                return candidate.overlap(with: box) > overlap || candidate.smallerShare(with: box) > containment
            }
            if !suppressed { kept.append(items[index]) }
        }
        return kept
    }
}

extension PixelRect {
    /// The share (0...1) of this rectangle's area that lies inside `other`.
    func share(inside other: PixelRect) -> Double {
        let ix = max(0, min(x + width, other.x + other.width) - max(x, other.x))
        let iy = max(0, min(y + height, other.y + other.height) - max(y, other.y))
        return Double(ix * iy) / Double(max(1, width * height))
    }

    /// The share (0...1) of the smaller of this rectangle and `other` that lies inside the other.
    func smallerShare(with other: PixelRect) -> Double {
        let ix = max(0, min(x + width, other.x + other.width) - max(x, other.x))
        let iy = max(0, min(y + height, other.y + other.height) - max(y, other.y))
        return Double(ix * iy) / Double(max(1, min(width * height, other.width * other.height)))
    }

    /// Whether the point lies inside.
    func contains(x px: Int, y py: Int) -> Bool {
        px >= x && py >= y && px < x + width && py < y + height
    }

    /// This rectangle (in a picture of `from`) in the same picture at `to`, rounded outwards, clamped.
    func rescaled(from: PixelSize, to: PixelSize) -> PixelRect {
        let sx = Double(to.width) / Double(max(1, from.width)), sy = Double(to.height) / Double(max(1, from.height))
        let left = max(0, Int((Double(x) * sx).rounded(.down))), top = max(0, Int((Double(y) * sy).rounded(.down)))
        let right = min(to.width, Int((Double(x + width) * sx).rounded(.up)))
        let bottom = min(to.height, Int((Double(y + height) * sy).rounded(.up)))
        return PixelRect(x: min(left, to.width - 1), y: min(top, to.height - 1),
                         width: max(1, right - min(left, to.width - 1)), height: max(1, bottom - min(top, to.height - 1)))
    }
}
