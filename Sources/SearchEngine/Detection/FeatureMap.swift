import ImageOps

/// The detector network's activations over a picture: `channels` values for
/// each cell of a `columns × rows` grid, each cell `stride` input pixels
/// square. The picture filled ``content`` cells of the grid (the rest is the
/// white padding that made its sides multiples of the stride).
public struct FeatureMap: Sendable {
    public let channels: Int
    public let columns: Int
    public let rows: Int
    /// Planar: channel after channel, each `rows × columns`, row after row.
    public let values: [Float]
    /// The grid cells the picture covers (partly, at the right and bottom edges).
    public let content: (columns: Int, rows: Int)
    /// Picture pixels per cell, horizontally and vertically (the picture's size over the content's input size, times the stride).
    public let cellSize: (width: Double, height: Double)

    public init(channels: Int, columns: Int, rows: Int, values: [Float], content: (columns: Int, rows: Int),
                cellSize: (width: Double, height: Double)) {
        precondition(values.count == channels * columns * rows, "\(values.count) values for \(channels)×\(rows)×\(columns)")
        self.channels = channels
        self.columns = columns
        self.rows = rows
        self.values = values
        self.content = content
        self.cellSize = cellSize
    }

    /// The features of one cell (`channels` floats).
    public func cell(column: Int, row: Int) -> [Float] {
        let plane = columns * rows, offset = row * columns + column
        return (0..<channels).map { values[$0 * plane + offset] }
    }

    /// The mean features of the cells of a window (columns `x0..<x1`, rows `y0..<y1`).
    public func pooled(columns x: Range<Int>, rows y: Range<Int>) -> [Float] {
        let plane = columns * rows, count = Float(max(1, x.count * y.count))
        return values.withUnsafeBufferPointer { v in
            (0..<channels).map { channel in
                var sum: Float = 0
                for row in y { for column in x { sum += v[channel * plane + row * columns + column] } }
                return sum / count
            }
        }
    }

    /// A window of cells as a rectangle of the picture (of `size`), clamped.
    public func region(columns x: Range<Int>, rows y: Range<Int>, in size: PixelSize) -> PixelRect {
        let left = Int((Double(x.lowerBound) * cellSize.width).rounded()), top = Int((Double(y.lowerBound) * cellSize.height).rounded())
        let right = min(size.width, Int((Double(x.upperBound) * cellSize.width).rounded()))
        let bottom = min(size.height, Int((Double(y.upperBound) * cellSize.height).rounded()))
        let x0 = min(max(0, left), size.width - 1), y0 = min(max(0, top), size.height - 1)
        return PixelRect(x: x0, y: y0, width: max(1, right - x0), height: max(1, bottom - y0))
    }
}

extension FeatureMap {
    /// Each cell's features scaled to unit length, cell after cell (row after row): what cosine similarities compare.
    func unitCells() -> [[Float]] {
        let plane = columns * rows
        return values.withUnsafeBufferPointer { v in
            (0..<plane).map { cell in
                var vector = (0..<channels).map { v[$0 * plane + cell] }
                let length = vector.reduce(0) { $0 + $1 * $1 }.squareRoot()
                let divisor = max(length, 1e-6)
                for index in vector.indices { vector[index] /= divisor }
                return vector
            }
        }
    }

    /// The dot product of two equally long vectors.
    static func dot(_ a: [Float], _ b: [Float]) -> Float {
        a.withUnsafeBufferPointer { x in b.withUnsafeBufferPointer { y in DotProduct.of(x.baseAddress!, y.baseAddress!, x.count) } }
    }
}
