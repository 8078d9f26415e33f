/// Learned vectors in memory: each row as `Int8`s (scaled so its largest
/// magnitude is 127) and the inverse of that row's length, so a score is
/// the cosine of the query and the row — 516 bytes for a 512-float vector,
/// the "at most 1 KB per item". Rounding to 8 bits keeps 99.5 % of
/// each query's ten nearest (bench/RESULTS.md, issue 25 table (c)).
///
/// A row without a vector holds zeros and scores a cosine of 0, as
/// unrelated. With `keepsExact` the float rows are kept too (a catalog copy
/// writes them exactly).
public struct QuantizedMatrix: Sendable {
    /// Values per row (a multiple of 16 for the SIMD scan).
    public let dimensions: Int
    /// `count × dimensions` values, row after row.
    public private(set) var values: [Int8] = []
    /// 1 / ‖row‖ of each row's `Int8` values; 0 for a row without a vector.
    public private(set) var inverseNorms: [Float] = []
    /// The rows as given, when kept.
    public private(set) var exact: [[Float]?]?
    /// How many rows hold a vector.
    public private(set) var filled = 0

    public init(dimensions: Int, keepsExact: Bool = false) {
        precondition(dimensions > 0)
        self.dimensions = dimensions
        exact = keepsExact ? [] : nil
    }

    /// The number of rows.
    public var count: Int { inverseNorms.count }

    /// Adds a row; nil (or a vector of another length, or zeros) adds an empty one.
    public mutating func append(_ vector: [Float]?) {
        let (row, inverseNorm) = vector.flatMap { $0.count == dimensions ? Self.quantized($0) : nil }
            ?? ([Int8](repeating: 0, count: dimensions), 0)
        values.append(contentsOf: row)
        inverseNorms.append(inverseNorm)
        if inverseNorm > 0 { filled += 1 }
        exact?.append(inverseNorm > 0 ? vector : nil)
    }

    /// A vector's `Int8`s and their inverse length; nil for a zero or non-finite vector.
    static func quantized(_ vector: [Float]) -> ([Int8], Float)? {
        let largest = vector.reduce(Float(0)) { max($0, abs($1)) }
        guard largest > 0, largest.isFinite else { return nil }
        let scale = 127 / largest
        let row = vector.map { Int8(($0 * scale).rounded()) }
        let squared = row.reduce(Int32(0)) { $0 + Int32($1) * Int32($1) }
        return (row, 1 / Float(squared).squareRoot())
    }

    /// Whether a row holds a vector.
    public func hasVector(at row: Int) -> Bool { inverseNorms[row] > 0 }

    /// A row as a unit `Float` vector (its `Int8`s scaled by its inverse length): the
    /// query vector of a catalog image, whose cosine with its own row is 1.
    public func unitVector(at row: Int) -> [Float]? {
        guard hasVector(at: row) else { return nil }
        let scale = inverseNorms[row]
        return values[(row * dimensions)..<((row + 1) * dimensions)].map { Float($0) * scale }
    }

    /// What a vector becomes as a row, as a unit `Float` vector: the query vector of a
    /// catalog image read from a store that scores elsewhere (PostgreSQL), the same as
    /// ``unitVector(at:)`` of its row in memory.
    public static func unitVector(of vector: [Float]) -> [Float]? {
        guard let (row, inverseNorm) = quantized(vector) else { return nil }
        return row.map { Float($0) * inverseNorm }
    }

    /// A row exactly as given (when kept), else its unit vector.
    public func vector(at row: Int) -> [Float]? {
        if let exact { return exact[row] }
        return unitVector(at: row)
    }

    /// The cosine of `query` (any length but zero) with each of the given rows (all when nil); 0 for rows without a vector.
    public func cosines(with query: [Float], rows: [Int]? = nil) -> [Float] {
        precondition(query.count == dimensions)
        let norm = query.reduce(0) { $0 + $1 * $1 }.squareRoot()
        let queryScale: Float = norm > 0 ? 1 / norm : 0
        let count = rows?.count ?? self.count
        return [Float](unsafeUninitializedCapacity: count) { out, initialized in
            values.withUnsafeBufferPointer { base in
                query.withUnsafeBufferPointer { q in
                    inverseNorms.withUnsafeBufferPointer { norms in
                        guard let rowBase = base.baseAddress, let queryBase = q.baseAddress else { return }
                        for i in 0..<count {
                            let row = rows?[i] ?? i
                            out[i] = DotProduct.of(queryBase, rowBase + row * dimensions, dimensions) * norms[row] * queryScale
                        }
                    }
                }
            }
            initialized = count
        }
    }

    /// The cosine of two rows (0 when either has no vector).
    public func cosine(_ a: Int, _ b: Int) -> Float {
        guard hasVector(at: a), hasVector(at: b) else { return 0 }
        var sum: Int32 = 0
        values.withUnsafeBufferPointer { base in
            let x = base.baseAddress! + a * dimensions, y = base.baseAddress! + b * dimensions
            for i in 0..<dimensions { sum &+= Int32(x[i]) * Int32(y[i]) }
        }
        return Float(sum) * inverseNorms[a] * inverseNorms[b]
    }
}
