import Foundation
import SearchEngine
import ConcurrencyToolkit
import TestSupport
import Testing
import VisualSearch

@Suite("Ranking", .timeLimit(.minutes(10)))
struct RankingTests {
    static func parameters(_ configure: (inout SearchParameters) -> Void = { _ in }) -> SearchParameters {
        var parameters = SearchParameters()
        parameters.limit = 100
        configure(&parameters)
        return parameters
    }

    /// Five rows; rows 1 and 4 tie at 0.9, rows 0 and 2 at 0.5.
    static let scores: [Float] = [0.5, 0.9, 0.5, 0.1, 0.9]
    static let names = ["e", "d", "c", "b", "a"]

    static func rows(_ ranked: Ranking.Ranked) -> [Int] { ranked.page.map(\.row) }

    @Test("best first; equal scores rank by ascending name; every score is kept as given")
    func order() {
        let ranked = Ranking(parameters: Self.parameters()).rank(scores: Self.scores, rows: nil, names: Self.names)
        #expect(Self.rows(ranked) == [4, 1, 2, 0, 3])
        #expect(ranked.page.map(\.score) == [0.9, 0.9, 0.5, 0.5, 0.1])
        #expect(ranked.total == 5)
    }

    struct ScoreRangeCase: Sendable {
        let min: Float?, max: Float?, rows: [Int]
    }

    @Test("score_min and score_max are inclusive bounds; total counts only scores inside them", arguments: [
        ScoreRangeCase(min: 0.5, max: 0.9, rows: [4, 1, 2, 0]),
        ScoreRangeCase(min: 0.6, max: nil, rows: [4, 1]),
        ScoreRangeCase(min: nil, max: 0.4, rows: [3]),
        ScoreRangeCase(min: 0.5, max: 0.5, rows: [2, 0]),
        ScoreRangeCase(min: 0.95, max: 1, rows: []),
        ScoreRangeCase(min: 0, max: 1, rows: [4, 1, 2, 0, 3]),
    ])
    func scoreRange(range: ScoreRangeCase) {
        let ranked = Ranking(parameters: Self.parameters { $0.scoreMin = range.min; $0.scoreMax = range.max })
            .rank(scores: Self.scores, rows: nil, names: Self.names)
        #expect(Self.rows(ranked) == range.rows)
        #expect(ranked.total == range.rows.count)
        #expect(ranked.matchedRows.map(Set.init) == Set(range.rows))
    }

    @Test("an excluded row is never returned nor counted")
    func exclusion() {
        let ranked = Ranking(parameters: Self.parameters()).rank(scores: Self.scores, rows: nil, names: Self.names, excluding: 4)
        #expect(Self.rows(ranked) == [1, 2, 0, 3])
        #expect(ranked.total == 4)
        #expect(ranked.matchedRows.map(Set.init) == [0, 1, 2, 3])
    }

    @Test("candidate rows: scores align with them, results name the rows themselves")
    func candidateRows() {
        let names = ["r0", "r1", "r2", "r3", "r4", "r5"]
        let ranked = Ranking(parameters: Self.parameters()).rank(scores: [0.2, 0.7, 0.9], rows: [5, 0, 3], names: names, excluding: 0)
        #expect(Self.rows(ranked) == [3, 5])
        #expect(ranked.page.map(\.score) == [0.9, 0.2])
        #expect(ranked.total == 2)
        #expect(ranked.matchedRows.map(Set.init) == [3, 5])
    }

    @Test("pages are consecutive slices of one order; a page past the end is empty and keeps the total",
          arguments: [(1, [4, 1]), (2, [2, 0]), (3, [3]), (4, []), (1_000_000, []), (Int.max, [])])
    func paging(page: Int, expected: [Int]) {
        let ranked = Ranking(parameters: Self.parameters { $0.limit = 2; $0.page = page }).rank(scores: Self.scores, rows: nil, names: Self.names)
        #expect(Self.rows(ranked) == expected)
        #expect(ranked.total == 5)
    }

    @Test("the largest limit and page numbers neither overflow nor return more than there is")
    func extremePaging() {
        for (page, limit) in [(Int.max, SearchParameters.maximumLimit), (Int.max / 2, 3), (2, Int.max), (Int.max, Int.max)] {
            let ranked = Ranking(parameters: Self.parameters { $0.limit = limit; $0.page = page; $0.deduplicates = true })
                .rank(scores: Self.scores, rows: nil, names: Self.names)
            #expect(ranked.total == 5)
            #expect(ranked.page.isEmpty, "page \(page), limit \(limit)")
        }
        let whole = Ranking(parameters: Self.parameters { $0.limit = Int.max }).rank(scores: Self.scores, rows: nil, names: Self.names)
        #expect(Self.rows(whole) == [4, 1, 2, 0, 3])
    }

    /// Rows 4 and 1 are near copies; so are 2 and 0.
    static func similarity(_ a: Int, _ b: Int) -> Float {
        let pair = Set([a, b])
        if pair == [4, 1] { return 0.99 }
        if pair == [2, 0] { return 0.98 }
        return 0.2
    }

    @Test("dedup drops a result at least dedup_score_threshold similar to a better one", arguments: [
        (Float(0.98), [4, 2, 3]),
        (Float(0.985), [4, 2, 0, 3]),
        (Float(0.995), [4, 1, 2, 0, 3]),
        (Float(0.1), [4]),
    ])
    func dedup(threshold: Float, expected: [Int]) {
        let ranked = Ranking(parameters: Self.parameters { $0.deduplicates = true; $0.dedupScoreThreshold = threshold })
            .rank(scores: Self.scores, rows: nil, names: Self.names, similarity: Self.similarity)
        #expect(Self.rows(ranked) == expected)
    }

    @Test("dedup is applied before paging; without dedup the similarity is not consulted")
    func dedupAndPages() {
        let second = Ranking(parameters: Self.parameters { $0.deduplicates = true; $0.limit = 1; $0.page = 2 })
            .rank(scores: Self.scores, rows: nil, names: Self.names, similarity: Self.similarity)
        #expect(Self.rows(second) == [2])
        let plain = Ranking(parameters: Self.parameters()).rank(scores: Self.scores, rows: nil, names: Self.names) { _, _ in
            Issue.record("similarity consulted without dedup")
            return 1
        }
        #expect(Self.rows(plain) == [4, 1, 2, 0, 3])
    }

    @Test("dedup on the first page finds enough survivors when many results are copies")
    func dedupMargin() {
        // 60 rows: every even row is a near copy of the row after it.
        let scores = (0..<60).map { Float(1) - Float($0) / 100 }
        let names = (0..<60).map { ($0 < 10 ? "n0" : "n") + String($0) }
        let ranked = Ranking(parameters: Self.parameters { $0.deduplicates = true; $0.limit = 10 })
            .rank(scores: scores, rows: nil, names: names) { a, b in (min(a, b) % 2 == 0 && abs(a - b) == 1) ? 1 : 0 }
        #expect(Self.rows(ranked) == [0, 2, 4, 6, 8, 10, 12, 14, 16, 18])
    }

    @Test("dedup stops at the page's end: with no copies, 100 results cost 4,950 similarities, not those of all 320 kept")
    func dedupStopsAtPageEnd() {
        // /recommendations dedups always; ranking keeps 3 × (page × limit) + 20 for it.
        let scores = (0..<3000).map { Float(1) - Float($0) / 4000 }
        let names = (0..<3000).map { String(format: "n%04d", $0) }
        let consulted = Locked(0)
        let ranked = Ranking(parameters: Self.parameters { $0.deduplicates = true; $0.limit = 100 })
            .rank(scores: scores, rows: nil, names: names) { _, _ in
                consulted.withLock { $0 += 1 }
                return 0
            }
        #expect(Self.rows(ranked) == Array(0..<100))
        #expect(consulted.withLock { $0 } == 100 * 99 / 2)
    }

    @Test("matchedRows is nil only when every row matched; otherwise it lists every match")
    func matchedRows() {
        let rank = { (configure: (inout SearchParameters) -> Void, rows: [Int]?, excluding: Int?) -> Ranking.Ranked in
            let scores = rows.map { $0.map { Self.scores[$0] } } ?? Self.scores
            return Ranking(parameters: Self.parameters(configure)).rank(scores: scores, rows: rows, names: Self.names, excluding: excluding)
        }
        #expect(rank({ _ in }, nil, nil).matchedRows == nil)
        #expect(rank({ $0.limit = 1 }, nil, nil).matchedRows == nil)
        #expect(rank({ $0.scoreMin = 0 }, nil, nil).matchedRows.map(Set.init) == [0, 1, 2, 3, 4])
        #expect(rank({ $0.scoreMax = 1 }, nil, nil).matchedRows.map(Set.init) == [0, 1, 2, 3, 4])
        #expect(rank({ _ in }, [0, 1, 2, 3, 4], nil).matchedRows.map(Set.init) == [0, 1, 2, 3, 4])
        #expect(rank({ _ in }, [3, 1], nil).matchedRows.map(Set.init) == [1, 3])
        #expect(rank({ $0.limit = 1 }, nil, 3).matchedRows.map(Set.init) == [0, 1, 2, 4])
    }

    @Test("random scores: every page equals the matching slice of a full sort by score, then name")
    func randomised() {
        var random = TestSeed("RankingTests.randomised")
        for _ in 0..<200 {
            let count = Int.random(in: 0...80, using: &random)
            // Few distinct values, so ties are common.
            let scores = (0..<count).map { _ in Float(Int.random(in: 0...10, using: &random)) / 10 }
            // Random, distinct names: ties break in an order the test cannot know in advance.
            let names = (0..<count).map { String(UInt16.random(in: 0...UInt16.max, using: &random), radix: 36) + "-\($0)" }
            let limit = Int.random(in: 1...12, using: &random), page = Int.random(in: 1...8, using: &random)
            let minimum: Float? = Bool.random(using: &random) ? Float(Int.random(in: 0...5, using: &random)) / 10 : nil
            let ranked = Ranking(parameters: Self.parameters { $0.limit = limit; $0.page = page; $0.scoreMin = minimum })
                .rank(scores: scores, rows: nil, names: names)

            let expected = scores.indices.filter { scores[$0] >= (minimum ?? 0) }
                .sorted { scores[$0] != scores[$1] ? scores[$0] > scores[$1] : names[$0] < names[$1] }
            let start = min(expected.count, (page - 1) * limit)
            #expect(Self.rows(ranked) == Array(expected[start..<min(expected.count, start + limit)]), "seed \(random.seed)")
            #expect(ranked.total == expected.count)
        }
    }
}
