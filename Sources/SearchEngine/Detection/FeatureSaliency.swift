import ImageOps

/// How unlike the picture's border each place of it looks to the network:
/// the plain background's idea in the network's feature space. Each cell of
/// the detector's ``FeatureMap`` (unit length) is compared with the grid's
/// border cells; its saliency is its ``kth``-nearest cosine distance to them
/// (a share of the ring, so an object touching the border does not hide
/// itself). The map is upsampled four times (bilinear, half-pixel centres,
/// edges clamped) and scaled to 0...1. A box's saliency is its mean inside,
/// and that minus the mean of a ring a quarter of its sides wide.
struct FeatureSaliency: Sendable {
    static let kth = 0.2
    static let upsample = 4
    let columns: Int
    let rows: Int
    /// Integral image of the upsampled, normalised map: (rows × 4 + 1) × (columns × 4 + 1).
    let integral: [Double]
    /// Picture pixels to upsampled cells, horizontally and vertically.
    let scale: (x: Double, y: Double)

    init(map: FeatureMap, cells unit: [[Float]]) {
        columns = map.columns
        rows = map.rows
        let ring = unit.indices.filter { let x = $0 % map.columns, y = $0 / map.columns
            return x == 0 || y == 0 || x == map.columns - 1 || y == map.rows - 1 }
        let k = max(2, Int((Self.kth * Double(ring.count)).rounded(.toNearestOrEven)))
        let saliency: [Double] = unit.map { cell in
            let distances = ring.map { 1 - Double(FeatureMap.dot(cell, unit[$0])) }.sorted()
            return distances[min(k, distances.count) - 1]
        }
        let factor = Self.upsample, width = columns * factor, height = rows * factor
        var up = [Double](repeating: 0, count: width * height)
        for y in 0..<height {
            let sy = min(max((Double(y) + 0.5) / Double(factor) - 0.5, 0), Double(rows - 1))
            let y0 = Int(sy), y1 = min(y0 + 1, rows - 1), fy = sy - Double(y0)
            for x in 0..<width {
                let sx = min(max((Double(x) + 0.5) / Double(factor) - 0.5, 0), Double(columns - 1))
                let x0 = Int(sx), x1 = min(x0 + 1, columns - 1), fx = sx - Double(x0)
                let top = saliency[y0 * columns + x0] * (1 - fx) + saliency[y0 * columns + x1] * fx
                let bottom = saliency[y1 * columns + x0] * (1 - fx) + saliency[y1 * columns + x1] * fx
                up[y * width + x] = top * (1 - fy) + bottom * fy
            }
        }
        let low = up.min() ?? 0, high = up.max() ?? 0, range = max(1e-6, high - low)
        var integral = [Double](repeating: 0, count: (width + 1) * (height + 1))
        for y in 0..<height {
            var row = 0.0
            for x in 0..<width {
                row += (up[y * width + x] - low) / range
                integral[(y + 1) * (width + 1) + x + 1] = integral[y * (width + 1) + x + 1] + row
            }
        }
        self.integral = integral
        scale = (Double(factor) / map.cellSize.width, Double(factor) / map.cellSize.height)
    }

    /// The box's (picture pixels) mean saliency inside, and that minus its ring's.
    func measure(_ box: PixelRect) -> (inside: Double, contrast: Double) {
        let width = columns * Self.upsample, height = rows * Self.upsample
        func total(_ x0: Int, _ y0: Int, _ x1: Int, _ y1: Int) -> Double {
            integral[y1 * (width + 1) + x1] - integral[y0 * (width + 1) + x1] - integral[y1 * (width + 1) + x0] + integral[y0 * (width + 1) + x0]
        }
        func at(_ v: Double) -> Int { Int(v.rounded(.toNearestOrEven)) }
        let x0 = min(max(at(Double(box.x) * scale.x), 0), width - 1), y0 = min(max(at(Double(box.y) * scale.y), 0), height - 1)
        let x1 = min(max(at(Double(box.x + box.width) * scale.x), x0 + 1), width)
        let y1 = min(max(at(Double(box.y + box.height) * scale.y), y0 + 1), height)
        let rx = max(1, at(0.25 * Double(x1 - x0))), ry = max(1, at(0.25 * Double(y1 - y0)))
        let ox0 = max(0, x0 - rx), oy0 = max(0, y0 - ry), ox1 = min(width, x1 + rx), oy1 = min(height, y1 + ry)
        let inside = total(x0, y0, x1, y1), area = Double((y1 - y0) * (x1 - x0))
        let ringArea = Double((oy1 - oy0) * (ox1 - ox0)) - area
        let ring = ringArea > 0 ? (total(ox0, oy0, ox1, oy1) - inside) / ringArea : 0
        return (inside / area, inside / area - ring)
    }
}
