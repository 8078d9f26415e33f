@testable import SearchEngine
import Testing
import Tracking
import TestSupport

/// Co-engagement and popularity from collector events, on small logs whose
/// answers can be worked out by hand.
@Suite("EngagementGraph")
struct EngagementGraphTests {
    static func event(_ action: TrackingAction, _ item: String?, query: String? = nil, session: String? = nil) -> TrackingEvent {
        var event = TrackingEvent(action: action)
        event.pid = item
        event.queryId = query
        event.sid = session
        return event
    }

    @Test("items engaged with after the same query are co-engaged; the item itself is never its own neighbour")
    func sameQuery() {
        var graph = EngagementGraph()
        graph.add([Self.event(.productClick, "a", query: "q1"), Self.event(.productClick, "b", query: "q1"),
                   Self.event(.productClick, "c", query: "q2")])
        let neighbours = graph.coEngagement(of: "a", limit: 10)
        #expect(neighbours.map(\.item) == ["b"])
        #expect(neighbours[0].score == 1)  // the strongest co-engaged item scores 1
        #expect(graph.coEngagement(of: "c", limit: 10).isEmpty)
        #expect(graph.coEngagement(of: "unknown", limit: 10).isEmpty)
    }

    @Test("sessions group too; a stronger action outweighs a click; the strongest action per group counts once")
    func sessionsAndWeights() {
        var graph = EngagementGraph()
        graph.add([
            Self.event(.productClick, "a", session: "s1"), Self.event(.productClick, "b", session: "s1"),
            Self.event(.addToCart, "c", session: "s1"),
            Self.event(.productClick, "a", session: "s2"), Self.event(.productClick, "a", session: "s2"),
            Self.event(.transaction, "b", session: "s2"),
        ])
        // a: s1 = 1, s2 = 1;  b: s1 = 1, s2 = 5 (its purchase, not 1 + 5);  c: s1 = 3.
        // With a: b = 1·1 + 1·5 = 6, c = 1·3 = 3; relative to the strongest: b 1, c 0.5.
        let neighbours = graph.coEngagement(of: "a", limit: 10)
        #expect(neighbours.map(\.item) == ["b", "c"])
        #expect(neighbours[0].score == 1 && abs(neighbours[1].score - 0.5) < 1e-6)
        #expect(graph.coEngagement(of: "a", limit: 1).map(\.item) == ["b"])
    }

    @Test("impressions, searches, custom actions and events without a product do not count")
    func ignored() {
        var graph = EngagementGraph()
        graph.add([Self.event(.productView, "a", query: "q"), Self.event(.view, "b", query: "q"),
                   Self.event(.resultLoad, "a", query: "q"), Self.event(.search, "a", query: "q"),
                   Self.event(.custom("open_app"), "a", query: "q"), Self.event(.transaction, nil, query: "q")])
        #expect(graph.isEmpty && graph.eventCount == 0)
        #expect(graph.popularItems().isEmpty)
    }

    @Test("popularity: total weight relative to the most engaged item's, 0 for items without events")
    func popularity() {
        var graph = EngagementGraph()
        graph.add([Self.event(.transaction, "hit"), Self.event(.transaction, "hit"), Self.event(.productClick, "niche")])
        #expect(graph.popularity(of: "hit") == 1)
        #expect(abs(graph.popularity(of: "niche") - 0.1) < 1e-6)  // 1 of 10
        #expect(graph.popularity(of: "new") == 0)
        #expect(graph.coEngagement(of: "hit", limit: 5).isEmpty)  // no query, no session: no group
    }

    @Test("folding events in two batches gives the same graph as one")
    func incremental() {
        let events = (0..<60).map { i in
            Self.event(i % 3 == 0 ? .addToCart : .productClick, "item\(i % 7)", query: "q\(i % 5)", session: "s\(i % 4)")
        }
        var once = EngagementGraph(), twice = EngagementGraph()
        once.add(events)
        twice.add(events[..<25])
        twice.add(events[25...])
        for item in (0..<7).map({ "item\($0)" }) {
            let a = once.coEngagement(of: item, limit: 10), b = twice.coEngagement(of: item, limit: 10)
            #expect(a.map(\.item) == b.map(\.item) && zip(a, b).allSatisfy { abs($0.score - $1.score) < 1e-6 })
            #expect(once.popularity(of: item) == twice.popularity(of: item))
        }
    }
}

