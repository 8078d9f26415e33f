import VisualSearch

/// What a query is scored with: its vectors in the spaces its
/// ``SimilarityMode`` needs — the whole image's first, then a proposal's —
/// and how the two spaces' scores combine.
///
/// Every mode's score is ``Similarity``'s `1 − d/2` of unit vectors; `fused`
/// is `w·learned + (1 − w)·colour` of the same region, the best region
/// counting. Learned scores are of the cosine (``QuantizedMatrix``); a catalog
/// image without a learned vector scores as unrelated (cosine 0: 0.29) in the learned part.
struct QueryVectors: Sendable {
    var mode: SimilarityMode
    /// Colour vectors (``ColorFeatures``), never empty.
    var color: [[Float]]
    /// Learned vectors of the same regions; present whenever `mode` uses them.
    var learned: [[Float]]
    /// The learned share of a fused score.
    var fusedWeight: Float

    init(mode: SimilarityMode, color: [[Float]], learned: [[Float]]?, fusedWeight: Float) {
        precondition(!color.isEmpty)
        precondition(!mode.usesLearnedVectors || learned?.count == color.count, "learned vectors for every region")
        self.mode = mode
        self.color = color
        self.learned = learned ?? []
        self.fusedWeight = fusedWeight
    }

    /// The whole image's vectors only: a score range is a condition on one vector, on every store.
    var primaryOnly: QueryVectors {
        QueryVectors(mode: mode, color: [color[0]], learned: learned.isEmpty ? nil : [learned[0]], fusedWeight: fusedWeight)
    }

    /// How many regions.
    var count: Int { color.count }

    /// Combines a colour score and a learned score of one region as the mode says.
    @inline(__always)
    func combine(color: Float, learned: Float) -> Float {
        switch mode {
        case .color: color
        case .visual: learned
        case .fused: fusedWeight * learned + (1 - fusedWeight) * color
        }
    }
}

extension FeatureIndex {
    /// Each of the given rows' score (all rows when nil) against `query`: the best over its regions.
    func scores(for query: QueryVectors, rows: [Int]? = nil) -> [Float] {
        switch query.mode {
        case .color:
            return bestDotProducts(with: query.color, rows: rows).map(Similarity.score(dot:))
        case .visual:
            return bestDotProducts(with: query.learned, rows: rows, space: .learned).map(Similarity.score(dot:))
        case .fused:
            var best: [Float] = []
            for region in 0..<query.count {
                let color = dotProducts(with: query.color[region], rows: rows)
                let learned = dotProducts(with: query.learned[region], rows: rows, space: .learned)
                let combined = zip(color, learned).map { query.combine(color: Similarity.score(dot: $0), learned: Similarity.score(dot: $1)) }
                best = best.isEmpty ? combined : zip(best, combined).map { max($0, $1) }
            }
            return best
        }
    }

    /// The score between two rows as `mode` measures it (for dedup).
    func score(_ a: Int, _ b: Int, as query: QueryVectors) -> Float {
        let color = query.mode == .visual ? 0 : Similarity.score(dot: dot(a, b))
        let learned = query.mode == .color ? Similarity.score(dot: 0) : Similarity.score(dot: dot(a, b, space: .learned))
        return query.combine(color: color, learned: learned)
    }
}
