import ImageOps

/// Objects on a photograph, from the network's own evidence: the
/// class-activation maps of the picture's likeliest classes.
///
/// The detector network's ``FeatureMap`` of the picture (its longer side at
/// ``inputSide``); the pooled features' ``classes`` likeliest ImageNet
/// classes; for each grid cell the classifier's logit of each of them
/// (linear, so the cells' mean is the picture's logit); a cell's objectness
/// is the largest of those, rescaled to 0...1 between the grid's median and
/// its maximum. Each of ``thresholds`` cuts the grid into 8-connected
/// components of cells above it; each component's box (grown by half a cell
/// outwards, the receptive field's slack) is a proposal, scored by the mean
/// objectness of its cells. Nested proposals from the several thresholds are
/// left for ``NonMaximumSuppression`` and the classifier to decide between.
public struct ActivationProposals: Sendable, Hashable {
    /// The detector's input, longer side (a multiple of 32).
    public var inputSide = 448
    /// How many of the picture's likeliest classes make the objectness map.
    public var classes = 8
    /// The objectness levels a component is cut at.
    public var thresholds: [Float] = [0.35, 0.55, 0.75]

    public init() {}

    /// One proposed object.
    public struct Proposal: Sendable, Hashable {
        public var region: PixelRect
        /// The mean objectness (0...1) of its cells.
        public var strength: Float
    }

    /// The proposals of a picture of `size` from its feature map.
    public func proposals(from map: FeatureMap, head: ClassifierHead, size: PixelSize) -> [Proposal] {
        let columns = map.content.columns, rows = map.content.rows
        guard columns > 0, rows > 0 else { return [] }
        let pooled = map.pooled(columns: 0..<columns, rows: 0..<rows)
        let logits = head.logits(pooled)
        let top = logits.indices.sorted { logits[$0] > logits[$1] }.prefix(classes).map { $0 }
        // Objectness per cell: the largest activation of the likeliest classes.
        var objectness = [Float](repeating: 0, count: columns * rows)
        var cell = [Float](repeating: 0, count: map.channels)
        let plane = map.columns * map.rows
        map.values.withUnsafeBufferPointer { values in
            for row in 0..<rows {
                for column in 0..<columns {
                    for channel in 0..<map.channels { cell[channel] = values[channel * plane + row * map.columns + column] }
                    let activations = cell.withUnsafeBufferPointer { head.logits($0.baseAddress!, classIDs: top) }
                    objectness[row * columns + column] = activations.max() ?? 0
                }
            }
        }
        let sorted = objectness.sorted()
        let median = sorted[sorted.count / 2], peak = sorted.last ?? 0
        guard peak > median else { return [] }
        let levels = objectness.map { min(1, max(0, ($0 - median) / (peak - median))) }
        var found: [Proposal] = []
        for threshold in thresholds {
            for component in Self.components(levels, columns: columns, rows: rows, above: threshold) {
                let x0 = component.columns.lowerBound, y0 = component.rows.lowerBound
                let inner = map.region(columns: component.columns, rows: component.rows, in: size)
                let slackX = Int(map.cellSize.width / 2), slackY = Int(map.cellSize.height / 2)
                let left = max(0, inner.x - (x0 > 0 ? slackX : 0)), top = max(0, inner.y - (y0 > 0 ? slackY : 0))
                let right = min(size.width, inner.x + inner.width + slackX), bottom = min(size.height, inner.y + inner.height + slackY)
                found.append(Proposal(region: PixelRect(x: left, y: top, width: max(1, right - left), height: max(1, bottom - top)),
                                      strength: component.mean))
            }
        }
        return found
    }

    /// The 8-connected components of the cells whose level is above `threshold`: their extent and mean level.
    static func components(_ levels: [Float], columns: Int, rows: Int, above threshold: Float)
        -> [(columns: Range<Int>, rows: Range<Int>, mean: Float)] {
        var label = [Bool](repeating: false, count: levels.count)
        var found: [(columns: Range<Int>, rows: Range<Int>, mean: Float)] = []
        for start in levels.indices where levels[start] > threshold && !label[start] {
            label[start] = true
            var stack = [start]
            var minX = columns, minY = rows, maxX = -1, maxY = -1
            var sum: Float = 0, count = 0
            while let index = stack.popLast() {
                let x = index % columns, y = index / columns
                minX = min(minX, x); maxX = max(maxX, x); minY = min(minY, y); maxY = max(maxY, y)
                sum += levels[index]; count += 1
                for ny in max(0, y - 1)...min(rows - 1, y + 1) {
                    for nx in max(0, x - 1)...min(columns - 1, x + 1) {
                        let neighbour = ny * columns + nx
                        if levels[neighbour] > threshold && !label[neighbour] {
                            label[neighbour] = true
                            stack.append(neighbour)
                        }
                    }
                }
            }
            found.append((minX..<(maxX + 1), minY..<(maxY + 1), sum / Float(count)))
        }
        return found
    }
}
