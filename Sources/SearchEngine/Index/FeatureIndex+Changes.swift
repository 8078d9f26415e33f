extension FeatureIndex {
    /// The index with `changes` applied: removed ids gone, changed rows
    /// replaced where they are, new ones appended — in the order a fresh
    /// load gives (by id: a catalog gives a new image an id above every
    /// present one), so the result is row for row what loading the catalog
    /// at `changes.version` makes. The lookups are rebuilt only when rows
    /// were removed (rows after them move up).
    public func applying(_ changes: CatalogChanges) -> FeatureIndex {
        var index = self
        index.apply(changes)
        return index
    }

    mutating func apply(_ changes: CatalogChanges) {
        let rows = changes.rows
        precondition(rows.dimensions == dimensions && rows.learnedDimensions == learnedDimensions)
        // Removals first (an id removed and added again is in `rows`, not `removed`).
        let gone = Set(changes.removed.compactMap { row(id: $0) })
        if !gone.isEmpty { removeRows(gone) }
        var appended: [Int] = []
        for other in 0..<rows.count {
            if let row = row(id: rows.ids[other]) {
                replaceRow(row, from: rows, row: other)
            } else {
                appended.append(other)
            }
        }
        // Appended in id order, as a load orders them.
        for other in appended.sorted(by: { rows.ids[$0] < rows.ids[$1] }) { appendRow(from: rows, row: other) }
    }

    /// Drops `rows`, keeping the others in order, and rebuilds the lookups.
    mutating func removeRows(_ rows: Set<Int>) {
        let kept = (0..<count).filter { !rows.contains($0) }
        self = FeatureIndex(dimensions: dimensions, ids: kept.map { ids[$0] }, names: kept.map { names[$0] },
                            sources: kept.map { sources[$0] }, palettes: kept.map { palettes[$0] }, vectors: vectors.keeping(kept),
                            learned: learned?.keeping(kept))
    }

    /// Puts `other`'s `row` in place of this index's `row` (the same id).
    mutating func replaceRow(_ row: Int, from other: FeatureIndex, row otherRow: Int) {
        if names[row] != other.names[otherRow] {
            rowByName.removeValue(forKey: names[row])
            rowByName[other.names[otherRow]] = row
        }
        names[row] = other.names[otherRow]
        sources[row] = other.sources[otherRow]
        palettes[row] = other.palettes[otherRow]
        other.vectors.withRow(otherRow) { source in vectors.withMutableRow(row) { _ = $0.update(fromContentsOf: source) } }
        if let theirs = other.learned { learned?.replaceRow(row, from: theirs, row: otherRow) }
    }

    /// Appends `other`'s `row`.
    mutating func appendRow(from other: FeatureIndex, row otherRow: Int) {
        rowByName[other.names[otherRow]] = ids.count
        rowByID[other.ids[otherRow]] = ids.count
        ids.append(other.ids[otherRow])
        names.append(other.names[otherRow])
        sources.append(other.sources[otherRow])
        palettes.append(other.palettes[otherRow])
        other.vectors.withRow(otherRow) { vectors.appendRow(copying: $0) }
        if let theirs = other.learned { learned?.appendRow(from: theirs, row: otherRow) }
    }
}

extension QuantizedMatrix {
    /// The rows `kept`, in that order.
    func keeping(_ kept: [Int]) -> QuantizedMatrix {
        QuantizedMatrix(dimensions: dimensions, values: values.keeping(kept), inverseNorms: kept.map { inverseNorms[$0] })
    }

    /// Puts `other`'s `row` (its `Int8`s and inverse length, as they are) in place of `row`.
    mutating func replaceRow(_ row: Int, from other: QuantizedMatrix, row otherRow: Int) {
        precondition(other.dimensions == dimensions && exact == nil)
        let had = inverseNorms[row] > 0, has = other.inverseNorms[otherRow] > 0
        other.values.withRow(otherRow) { source in values.withMutableRow(row) { _ = $0.update(fromContentsOf: source) } }
        inverseNorms[row] = other.inverseNorms[otherRow]
        filled += (has ? 1 : 0) - (had ? 1 : 0)
    }

    /// Appends `other`'s `row` as it is.
    mutating func appendRow(from other: QuantizedMatrix, row otherRow: Int) {
        precondition(other.dimensions == dimensions && exact == nil)
        other.values.withRow(otherRow) { values.appendRow(copying: $0) }
        inverseNorms.append(other.inverseNorms[otherRow])
        if other.inverseNorms[otherRow] > 0 { filled += 1 }
    }
}
