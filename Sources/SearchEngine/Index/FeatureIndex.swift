/// Which of an image's vectors: the colour descriptor's or the learned embedding's.
public enum VectorSpace: Sendable, Hashable {
    case color
    case learned
}

/// Every catalog image's feature vector as `Float` rows (``RowBlocks``, so a
/// change copies only the blocks it touches), scanned with `SIMD16<Float>` dot products — and, for a catalog with
/// learned vectors, their ``QuantizedMatrix`` beside it (``VectorSpace/learned``,
/// scored by cosine; an image without one scores as unrelated). Vectors have unit length, so
/// the dot product ranks exactly like the Euclidean distance
/// (‖a−b‖² = 2 − 2·a·b) and maps to a score with ``Similarity/score(dot:)``.
public struct FeatureIndex: Sendable {
    /// Floats per vector (a multiple of 16 for the SIMD scan).
    public let dimensions: Int
    public internal(set) var ids: [Int64] = []
    public internal(set) var names: [String] = []
    public internal(set) var sources: [String] = []
    public internal(set) var palettes: [DominantColors] = []
    /// `count` rows of `dimensions` floats.
    public internal(set) var vectors: RowBlocks<Float>
    /// The learned vectors, when the index holds them.
    public internal(set) var learned: QuantizedMatrix?
    /// Floats per learned vector; 0 when the index holds none.
    public var learnedDimensions: Int { learned?.dimensions ?? 0 }
    /// How many rows hold a learned vector.
    public var learnedCount: Int { learned?.filled ?? 0 }
    var rowByName: [String: Int] = [:]
    var rowByID: [Int64: Int] = [:]

    /// An empty index; with `learnedDimensions`, one that holds learned vectors too
    /// (and, with `keepsExactLearned`, those vectors exactly as given, beside their `Int8` form).
    public init(dimensions: Int, learnedDimensions: Int = 0, keepsExactLearned: Bool = false) {
        self.dimensions = dimensions
        vectors = RowBlocks(width: dimensions)
        learned = learnedDimensions > 0 ? QuantizedMatrix(dimensions: learnedDimensions, keepsExact: keepsExactLearned) : nil
    }

    /// An index over bare vectors (`count × dimensions` floats), named by
    /// their row number: for benchmarks and tests of the scan itself.
    public init(dimensions: Int, vectors: [Float]) {
        precondition(dimensions > 0 && vectors.count % dimensions == 0)
        self.dimensions = dimensions
        learned = nil
        let count = vectors.count / dimensions
        ids = (0..<count).map(Int64.init)
        names = (0..<count).map { String($0) }
        sources = Array(repeating: "", count: count)
        palettes = Array(repeating: DominantColors(entries: []), count: count)
        self.vectors = RowBlocks(width: dimensions, elements: vectors)
    }

    /// An index of rows read back whole (``VectorFiles``): the lookups by name and id are rebuilt.
    init(dimensions: Int, ids: [Int64], names: [String], sources: [String], palettes: [DominantColors], vectors: RowBlocks<Float>,
         learned: QuantizedMatrix?) {
        precondition(names.count == ids.count && sources.count == ids.count && palettes.count == ids.count
                     && vectors.width == dimensions && vectors.rowCount == ids.count && (learned?.count ?? ids.count) == ids.count)
        self.dimensions = dimensions
        self.ids = ids
        self.names = names
        self.sources = sources
        self.palettes = palettes
        self.vectors = vectors
        self.learned = learned
        rowByName.reserveCapacity(ids.count)
        rowByID.reserveCapacity(ids.count)
        for (row, name) in names.enumerated() { rowByName[name] = row }
        for (row, id) in ids.enumerated() { rowByID[id] = row }
    }

    /// The number of images.
    public var count: Int { ids.count }

    /// Makes room for `count` images in all (a catalog's row count), so a load grows no
    /// array and rehashes no lookup table on the way.
    public mutating func reserveCapacity(_ count: Int) {
        ids.reserveCapacity(count)
        names.reserveCapacity(count)
        sources.reserveCapacity(count)
        palettes.reserveCapacity(count)
        vectors.reserveCapacity(rows: count)
        learned?.reserveCapacity(count)
        rowByName.reserveCapacity(count)
        rowByID.reserveCapacity(count)
    }

    /// Adds one image; `learned` is ignored by an index without learned vectors.
    public mutating func append(id: Int64, name: String, source: String, vector: [Float], learned: [Float]? = nil,
                                palette: DominantColors) {
        precondition(vector.count == dimensions, "vector has \(vector.count) floats, expected \(dimensions)")
        vector.withUnsafeBytes { vector in
            guard let learned else {
                return append(id: id, name: name, source: source, vectorBytes: vector, learnedBytes: nil, palette: palette)
            }
            learned.withUnsafeBytes { append(id: id, name: name, source: source, vectorBytes: vector, learnedBytes: $0, palette: palette) }
        }
    }

    /// Adds one image from the bytes of its vectors' native `Float`s, as a catalog stores
    /// them (at any alignment): copied straight into ``vectors`` and quantized straight
    /// into ``learned``, with no array made per row. `learnedBytes` is ignored by an index
    /// without learned vectors.
    public mutating func append(id: Int64, name: String, source: String, vectorBytes: UnsafeRawBufferPointer,
                                learnedBytes: UnsafeRawBufferPointer?, palette: DominantColors) {
        precondition(vectorBytes.count == dimensions * MemoryLayout<Float>.size,
                     "vector has \(vectorBytes.count / MemoryLayout<Float>.size) floats, expected \(dimensions)")
        learned?.append(bytes: learnedBytes)
        rowByName[name] = ids.count
        rowByID[id] = ids.count
        ids.append(id)
        names.append(name)
        sources.append(source)
        palettes.append(palette)
        vectors.appendRow { UnsafeMutableRawBufferPointer($0).copyMemory(from: vectorBytes) }
    }

    /// The row of an image name.
    public func row(named name: String) -> Int? { rowByName[name] }

    /// The row of a catalog id.
    public func row(id: Int64) -> Int? { rowByID[id] }

    /// The vector of a row.
    public func vector(at row: Int) -> [Float] {
        vectors.withRow(row) { Array($0) }
    }

    /// The learned vector of a row as a query searches with it (unit length; its
    /// cosine with its own row is 1) — or exactly as stored, when the index keeps
    /// them; nil when the row (or the index) has none.
    public func learnedVector(at row: Int) -> [Float]? {
        learned?.vector(at: row)
    }

    /// The similarity of `query` to the given rows (all when `nil`): dot products in
    /// colour space, cosines in the learned space (0 for rows without a learned vector).
    public func dotProducts(with query: [Float], rows: [Int]? = nil, space: VectorSpace) -> [Float] {
        switch space {
        case .color: dotProducts(with: query, rows: rows)
        case .learned: learned?.cosines(with: query, rows: rows) ?? [Float](repeating: 0, count: rows?.count ?? count)
        }
    }

    /// Dot products of `query` with the given rows (all rows when `nil`).
    public func dotProducts(with query: [Float], rows: [Int]? = nil) -> [Float] {
        precondition(query.count == dimensions)
        let count = rows?.count ?? self.count
        guard count > 0 else { return [] }  // never the empty buffer: its initializer writes the shared empty storage (docs/fuzzing.md, TSan)
        return [Float](unsafeUninitializedCapacity: count) { out, initialized in
            vectors.withRowAddresses { addresses in
                query.withUnsafeBufferPointer { q in
                    guard let queryBase = q.baseAddress else { return }
                    if let rows {
                        for (i, row) in rows.enumerated() {
                            out[i] = DotProduct.of(queryBase, addresses[row], dimensions)
                        }
                    } else {
                        for i in 0..<count {
                            out[i] = DotProduct.of(queryBase, addresses[i], dimensions)
                        }
                    }
                }
            }
            initialized = count
        }
    }

    /// For each of the given rows (all rows when `nil`), the largest of its
    /// dot products with `queries`: a query searched with several vectors
    /// (``QueryFeatures``) in one pass over the vectors.
    public func bestDotProducts(with queries: [[Float]], rows: [Int]? = nil, space: VectorSpace) -> [Float] {
        switch space {
        case .color:
            return bestDotProducts(with: queries, rows: rows)
        case .learned:
            var best: [Float] = []
            for query in queries {
                let each = dotProducts(with: query, rows: rows, space: .learned)
                best = best.isEmpty ? each : zip(best, each).map { max($0, $1) }
            }
            return best
        }
    }

    /// For each of the given rows (all rows when `nil`), the largest of its
    /// dot products with `queries` in colour space.
    public func bestDotProducts(with queries: [[Float]], rows: [Int]? = nil) -> [Float] {
        precondition(!queries.isEmpty && queries.allSatisfy { $0.count == dimensions })
        if queries.count == 1 { return dotProducts(with: queries[0], rows: rows) }
        let flat = queries.flatMap { $0 }
        let count = rows?.count ?? self.count
        guard count > 0 else { return [] }  // never the empty buffer: its initializer writes the shared empty storage (docs/fuzzing.md, TSan)
        return [Float](unsafeUninitializedCapacity: count) { out, initialized in
            vectors.withRowAddresses { addresses in
                flat.withUnsafeBufferPointer { q in
                    guard let queryBase = q.baseAddress else { return }
                    for i in 0..<count {
                        let row = addresses[rows?[i] ?? i]
                        var best = DotProduct.of(queryBase, row, dimensions)
                        for k in 1..<queries.count {
                            best = max(best, DotProduct.of(queryBase + k * dimensions, row, dimensions))
                        }
                        out[i] = best
                    }
                }
            }
            initialized = count
        }
    }

    /// The similarity of two stored rows in `space`: their dot product in colour, their cosine in the learned space.
    public func dot(_ a: Int, _ b: Int, space: VectorSpace) -> Float {
        switch space {
        case .color: dot(a, b)
        case .learned: learned?.cosine(a, b) ?? 0
        }
    }

    /// The dot product of two stored colour rows, without copying either vector.
    public func dot(_ a: Int, _ b: Int) -> Float {
        vectors.withRow(a) { x in vectors.withRow(b) { DotProduct.of(x.baseAddress!, $0.baseAddress!, dimensions) } }
    }
}

extension FeatureIndex {
    /// Whether `row` holds what `other`'s `otherRow` holds: id, name, source, palette, the colour vector
    /// bit for bit, the learned one as the same `Int8`s and inverse length (or neither has one).
    func sameRow(_ row: Int, as other: FeatureIndex, row otherRow: Int) -> Bool {
        guard ids[row] == other.ids[otherRow], names[row] == other.names[otherRow], sources[row] == other.sources[otherRow],
              palettes[row] == other.palettes[otherRow], dimensions == other.dimensions,
              learnedDimensions == other.learnedDimensions else { return false }
        let sameColor = vectors.withRow(row) { color in
            other.vectors.withRow(otherRow) { color.elementsEqual($0, by: { $0.bitPattern == $1.bitPattern }) }
        }
        guard sameColor else { return false }
        guard let learned, let theirs = other.learned else { return true }
        return learned.inverseNorms[row].bitPattern == theirs.inverseNorms[otherRow].bitPattern
            && learned.values.withRow(row) { values in theirs.values.withRow(otherRow) { values.elementsEqual($0) } }
    }

    /// The rows of `ids` (unknown ids left out), in the order given, as this index holds them.
    public func subset(ids wanted: [Int64]) -> FeatureIndex {
        let rows = wanted.compactMap { row(id: $0) }
        return FeatureIndex(dimensions: dimensions, ids: rows.map { ids[$0] }, names: rows.map { names[$0] },
                            sources: rows.map { sources[$0] }, palettes: rows.map { palettes[$0] },
                            vectors: vectors.keeping(rows), learned: learned?.keeping(rows))
    }
}
