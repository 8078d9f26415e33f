@testable import SearchEngine
import Testing
import Tracking
import VisualSearch
import TestSupport

/// The documented blend: visual only without events, co-engagement for items
/// with events, popularity for new ones.
@Suite("RecommendationBlend")
struct RecommendationBlendTests {
    static func clicks(_ pairs: [(String, String)]) -> EngagementGraph {
        var graph = EngagementGraph()
        graph.add(pairs.map { item, query in
            var event = TrackingEvent(action: .productClick)
            event.pid = item
            event.queryId = query
            return event
        })
        return graph
    }

    @Test("no events, or both weights 0: no terms, the answer is visual similarity")
    func visualOnly() {
        #expect(RecommendationBlend().terms(for: "a", in: EngagementGraph()) == nil)
        #expect(RecommendationBlend.visualOnly.terms(for: "a", in: Self.clicks([("a", "q"), ("b", "q")])) == nil)
    }

    @Test("an item with events: visual × (1 − e − p) + e × co-engagement + p × popularity; the item itself gets no boost")
    func coEngaged() throws {
        let graph = Self.clicks([("a", "q"), ("b", "q")])
        let terms = try #require(RecommendationBlend(engagementWeight: 0.4, popularityWeight: 0.1).terms(for: "a", in: graph))
        #expect(abs(terms.visualShare - 0.5) < 1e-6)
        #expect(abs(terms.score(visual: 0.6, item: "b") - (0.5 * 0.6 + 0.4 * 1 + 0.1 * 1)) < 1e-6)
        #expect(abs(terms.score(visual: 0.6, item: "z") - 0.3) < 1e-6)
        #expect(terms.boosts["a"] == nil)
    }

    @Test("a new item (no events of its own): the engagement share returns to the visual score, popularity still counts")
    func newItem() throws {
        let graph = Self.clicks([("a", "q"), ("b", "q"), ("b", "r")])
        let terms = try #require(RecommendationBlend(engagementWeight: 0.4, popularityWeight: 0.1).terms(for: "new", in: graph))
        #expect(abs(terms.visualShare - 0.9) < 1e-6)
        #expect(abs((terms.boosts["b"] ?? 0) - 0.1) < 1e-6)  // b is the most engaged: popularity 1
        #expect((terms.boosts["a"] ?? 0) > 0 && (terms.boosts["a"] ?? 0) < 0.1)
    }

    @Test("weights outside 0…1 or summing above 1 are refused, naming the setting")
    func validation() {
        #expect(throws: VisualSearchError.self) { try RecommendationBlend(engagementWeight: 1.2, popularityWeight: 0).validate() }
        #expect(throws: VisualSearchError.self) { try RecommendationBlend(engagementWeight: 0.5, popularityWeight: -0.1).validate() }
        #expect(throws: VisualSearchError.self) { try RecommendationBlend(engagementWeight: 0.8, popularityWeight: 0.3).validate() }
        #expect(throws: Never.self) { try RecommendationBlend().validate() }
    }
}
