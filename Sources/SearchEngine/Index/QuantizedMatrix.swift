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
    /// `count` rows of `dimensions` values.
    public internal(set) var values: RowBlocks<Int8>
    /// 1 / ‖row‖ of each row's `Int8` values; 0 for a row without a vector.
    public internal(set) var inverseNorms: [Float] = []
    /// The rows as given, when kept.
    public internal(set) var exact: [[Float]?]?
    /// How many rows hold a vector.
    public internal(set) var filled = 0

    public init(dimensions: Int, keepsExact: Bool = false) {
        precondition(dimensions > 0)
        self.dimensions = dimensions
        values = RowBlocks(width: dimensions)
        exact = keepsExact ? [] : nil
    }

    /// Rows read back as they were held (``VectorFiles``): `values` and `inverseNorms` of equal row counts.
    init(dimensions: Int, values: RowBlocks<Int8>, inverseNorms: [Float]) {
        precondition(dimensions > 0 && values.width == dimensions && values.rowCount == inverseNorms.count)
        self.dimensions = dimensions
        self.values = values
        self.inverseNorms = inverseNorms
        exact = nil
        filled = inverseNorms.reduce(0) { $0 + ($1 > 0 ? 1 : 0) }
    }

    /// The number of rows.
    public var count: Int { inverseNorms.count }

    /// Makes room for `rows` rows in all, so loading a catalog of known size grows no array.
    public mutating func reserveCapacity(_ rows: Int) {
        values.reserveCapacity(rows: rows)
        inverseNorms.reserveCapacity(rows)
        exact?.reserveCapacity(rows)
    }

    /// Adds a row; nil (or a vector of another length, or zeros) adds an empty one.
    public mutating func append(_ vector: [Float]?) {
        guard let vector else { return append(bytes: nil) }
        vector.withUnsafeBytes { append(bytes: $0) }
    }

    /// Adds a row from the bytes of its native `Float`s (as a catalog stores them, at any
    /// alignment), quantized straight into ``values``: no array per row, unless rows are kept
    /// exactly. Nil (or bytes of another length, or zeros) adds an empty one.
    public mutating func append(bytes: UnsafeRawBufferPointer?) {
        var inverseNorm: Float = 0
        values.appendRow { row in
            if let bytes, bytes.count == dimensions * MemoryLayout<Float>.size {
                inverseNorm = Self.quantize(bytes, into: row) ?? 0  // nil writes nothing: the row stays zeros
            }
        }
        inverseNorms.append(inverseNorm)
        if inverseNorm > 0 { filled += 1 }
        if exact != nil {
            exact?.append(inverseNorm > 0 ? bytes.map { bytes in (0..<dimensions).map { bytes.loadUnaligned(fromByteOffset: $0 * 4, as: Float.self) } } : nil)
        }
    }

    /// A vector's `Int8`s and their inverse length; nil for a zero or non-finite vector.
    static func quantized(_ vector: [Float]) -> ([Int8], Float)? {
        var inverseNorm: Float?
        let row = [Int8](unsafeUninitializedCapacity: vector.count) { row, initialized in
            inverseNorm = vector.withUnsafeBytes { quantize($0, into: row) }
            initialized = inverseNorm == nil ? 0 : vector.count
        }
        return inverseNorm.map { (row, $0) }
    }

    /// Writes a vector (the bytes of `row.count` native `Float`s, at any alignment) as `Int8`s
    /// scaled so its largest magnitude is 127, each `(value × scale).rounded()` — to nearest,
    /// ties away from zero — and returns their inverse length; nil, writing nothing, for a zero,
    /// non-finite or NaN-holding vector, or one too small to scale.
    ///
    /// Two passes of sixteen lanes: one finds the largest magnitude, one rounds and sums the
    /// squares (`Float.rounded()` is a libm call per value, which made this a third of a 1M-row
    /// catalog's load). Rounding adds and subtracts 1.5 × 2²³, which leaves the nearest
    /// integer (ties to even) of any |x| < 2²² in the float's low bits; an exact tie
    /// (x − nearest = ±½, an exact difference) is first moved half a step away from zero,
    /// onto the integer schoolbook rounding gives, so every value is bit for bit what
    /// `Int8((x * scale).rounded())` made.
    static func quantize(_ vector: UnsafeRawBufferPointer, into row: UnsafeMutableBufferPointer<Int8>) -> Float? {
        let count = row.count
        precondition(vector.count == count * MemoryLayout<Float>.size)
        func lanes(_ i: Int) -> SIMD16<Float> { vector.loadUnaligned(fromByteOffset: i * 4, as: SIMD16<Float>.self) }
        func scalar(_ i: Int) -> Float { vector.loadUnaligned(fromByteOffset: i * 4, as: Float.self) }

        var largestLanes = SIMD16<Float>()
        var nanLanes = SIMDMask<SIMD16<Int32>>()
        var i = 0
        while i + 16 <= count {
            let x = lanes(i)
            let magnitude = x.replacing(with: -x, where: x .< 0)
            largestLanes.replace(with: magnitude, where: magnitude .> largestLanes)  // a NaN never compares greater
            nanLanes .|= x .!= x
            i += 16
        }
        var largest = largestLanes.max(), sawNaN = any(nanLanes)
        while i < count {
            let x = scalar(i)
            largest = abs(x) > largest ? abs(x) : largest
            sawNaN = sawNaN || x.isNaN
            i += 1
        }
        let scale = 127 / largest
        guard largest > 0, largest.isFinite, scale.isFinite, !sawNaN else { return nil }

        let magic: Float = 12_582_912  // 1.5 × 2²³
        let magicBits = Int32(bitPattern: magic.bitPattern)
        var squares = SIMD16<Int32>()
        i = 0
        while i + 16 <= count {
            let x = lanes(i) * scale
            let off = x - ((x + magic) - magic)
            let away = SIMD16<Float>(repeating: 0.5).replacing(with: -0.5, where: x .< 0)
            let toRound = x.replacing(with: x + away, where: (off .== 0.5) .| (off .== -0.5))
            let values = unsafeBitCast(toRound + magic, to: SIMD16<Int32>.self) &- magicBits
            squares &+= values &* values
            for k in 0..<16 { row[i + k] = Int8(truncatingIfNeeded: values[k]) }
            i += 16
        }
        var squared = squares.wrappedSum()
        while i < count {
            let x = scalar(i) * scale
            let toRound = abs(x - ((x + magic) - magic)) == 0.5 ? x + Float(signOf: x, magnitudeOf: 0.5) : x
            let value = Int32(bitPattern: (toRound + magic).bitPattern) &- magicBits
            row[i] = Int8(truncatingIfNeeded: value)
            squared &+= value &* value
            i += 1
        }
        return 1 / Float(squared).squareRoot()
    }

    /// Whether a row holds a vector.
    public func hasVector(at row: Int) -> Bool { inverseNorms[row] > 0 }

    /// A row as a unit `Float` vector (its `Int8`s scaled by its inverse length): the
    /// query vector of a catalog image, whose cosine with its own row is 1.
    public func unitVector(at row: Int) -> [Float]? {
        guard hasVector(at: row) else { return nil }
        let scale = inverseNorms[row]
        return values.withRow(row) { $0.map { Float($0) * scale } }
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
        guard count > 0 else { return [] }  // never the empty buffer: its initializer writes the shared empty storage (docs/fuzzing.md, TSan)
        return [Float](unsafeUninitializedCapacity: count) { out, initialized in
            values.withRowAddresses { addresses in
                query.withUnsafeBufferPointer { q in
                    inverseNorms.withUnsafeBufferPointer { norms in
                        guard let queryBase = q.baseAddress else { return }
                        for i in 0..<count {
                            let row = rows?[i] ?? i
                            out[i] = DotProduct.of(queryBase, addresses[row], dimensions) * norms[row] * queryScale
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
        values.withRow(a) { x in
            values.withRow(b) { y in
                for i in 0..<dimensions { sum &+= Int32(x[i]) * Int32(y[i]) }
            }
        }
        return Float(sum) * inverseNorms[a] * inverseNorms[b]
    }
}
