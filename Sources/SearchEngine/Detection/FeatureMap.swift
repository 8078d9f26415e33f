import ImageOps

/// The detector network's activations over a picture: `channels` values for
/// each cell of a `columns × rows` grid, each cell `stride` input pixels
/// square (``cellSize`` in the picture's own pixels: the picture was resized
/// to the grid, not padded).
public struct FeatureMap: Sendable {
    public let channels: Int
    public let columns: Int
    public let rows: Int
    /// Planar: channel after channel, each `rows × columns`, row after row.
    public let values: [Float]
    /// Picture pixels per cell, horizontally and vertically (the picture's size over the input's, times the stride).
    public let cellSize: (width: Double, height: Double)

    public init(channels: Int, columns: Int, rows: Int, values: [Float], cellSize: (width: Double, height: Double)) {
        precondition(values.count == channels * columns * rows, "\(values.count) values for \(channels)×\(rows)×\(columns)")
        self.channels = channels
        self.columns = columns
        self.rows = rows
        self.values = values
        self.cellSize = cellSize
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
