import VisualSearch

/// The ranking stage of a query, as a pure function of scores: score range →
/// exclusion → top-k with deterministic ties → dedup → the requested page.
///
/// It knows nothing of storage or features: the caller gives every
/// candidate's score (all images, or the rows that passed `fq`), the names
/// that break ties, and a similarity between two rows for dedup.
///
/// ```swift
/// let ranked = Ranking(parameters: parameters).rank(scores: [0.9, 0.4, 0.7], rows: nil, names: ["a", "b", "c"])
/// ranked.page.map(\.row)   // [0, 2, 1]
/// ```
public struct Ranking: Sendable {
    /// One ranked result.
    public struct Entry: Sendable, Hashable {
        /// The row in the index.
        public var row: Int
        public var score: Float
    }

    /// What a query ranked.
    public struct Ranked: Sendable, Hashable {
        /// The requested page, best first.
        public var page: [Entry]
        /// Matches after filters, exclusion and the score range (all pages).
        public var total: Int
        /// Rows of every match, for facets; nil when every image matched.
        public var matchedRows: [Int]?
    }

    public let parameters: SearchParameters

    public init(parameters: SearchParameters) {
        self.parameters = parameters
    }

    /// Ranks candidates.
    /// - Parameters:
    ///   - scores: one score per candidate, aligned with `rows` (or with every row when `rows` is nil).
    ///   - rows: the candidate rows (those that passed the filters), or nil for every row.
    ///   - names: every row's name; equal scores rank by ascending name.
    ///   - excluding: a row never returned (the query image of a recommendation).
    ///   - similarity: the score between two rows, for dedup.
    public func rank(scores: [Float], rows: [Int]?, names: [String], excluding: Int? = nil,
                     similarity: (Int, Int) -> Float = { _, _ in 0 }) -> Ranked {
        let low = parameters.scoreMin ?? 0, high = parameters.scoreMax ?? 1
        let everythingMatches = rows == nil && excluding == nil && parameters.scoreMin == nil && parameters.scoreMax == nil
        var heap = BoundedHeap(capacity: kept(of: scores.count), names: names)
        var total = 0
        var matched: [Int] = []
        // One pass, no closure per candidate: this loop runs once per image in the catalog.
        scores.withUnsafeBufferPointer { scores in
            if everythingMatches {  // the common case: every image, nothing excluded, no score range
                for index in scores.indices where scores[index] >= low && scores[index] <= high {
                    total += 1
                    heap.insert(row: index, value: scores[index])
                }
                return
            }
            for index in scores.indices {
                let score = scores[index]
                guard score >= low && score <= high else { continue }
                let row = rows?[index] ?? index
                if row == excluding { continue }
                total += 1
                matched.append(row)
                heap.insert(row: row, value: score)
            }
        }
        var top = heap.sortedDescending().map { Entry(row: $0.row, score: $0.value) }
        if parameters.deduplicates {
            // Only the results up to the page's end are kept: dedup compares each with those kept before it.
            let (pageEnd, overflow) = skipped.addingReportingOverflow(max(0, parameters.limit))
            top = Ranking.deduplicate(top, threshold: parameters.dedupScoreThreshold, keeping: overflow ? .max : pageEnd,
                                      similarity: similarity)
        }
        let limit = max(0, parameters.limit)
        let start = min(top.count, skipped)
        return Ranked(page: Array(top[start..<(start + min(limit, top.count - start))]), total: total,
                      matchedRows: everythingMatches ? nil : matched)
    }

    /// How many of `count` candidates the ranking keeps before dedup and
    /// paging: the results up to the requested page's end, and with dedup a
    /// margin for those it will drop. Page numbers come from requests
    /// unbounded: saturates instead of overflowing, never more than `count`.
    public func kept(of count: Int) -> Int {
        let (product, overflow) = max(1, parameters.page).multipliedReportingOverflow(by: max(0, parameters.limit))
        let needed = overflow ? count : min(product, count)
        let (withMargin, marginOverflow) = needed.addingReportingOverflow(parameters.deduplicates ? needed * 2 + 20 : 0)
        return marginOverflow ? count : withMargin
    }

    /// The results before the requested page (saturated: `Int.max` past any catalog).
    public var skipped: Int {
        let (product, overflow) = (max(1, parameters.page) - 1).multipliedReportingOverflow(by: max(0, parameters.limit))
        return overflow ? .max : product
    }

    /// Drops every entry whose similarity to a better-ranked kept entry is at
    /// least `threshold`, and stops once `maximum` are kept (what follows
    /// cannot change them): each entry is compared with every one kept before
    /// it, so the work grows with the square of what is kept, not of what is given.
    public static func deduplicate(_ ranked: [Entry], threshold: Float, keeping maximum: Int = .max,
                                   similarity: (Int, Int) -> Float) -> [Entry] {
        var kept: [Entry] = []
        for candidate in ranked where kept.count < maximum && !kept.contains(where: { similarity(candidate.row, $0.row) >= threshold }) {
            kept.append(candidate)
        }
        return kept
    }
}
