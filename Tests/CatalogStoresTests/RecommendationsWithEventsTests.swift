import Foundation
@testable import SearchEngine
import TestSupport
import Testing
import Tracking
import VisualSearch

/// Recommendations that learn from the collector's events, on every store:
/// today's visual answers when there are no events (cold start), co-engaged
/// items first when there are, popularity for a new item, filters and score
/// ranges kept.
@Suite("Recommendations blended with events", .timeLimit(.minutes(10)))
struct RecommendationsWithEventsTests {
    /// 60 items with unrelated vectors, metadata `group` g0/g1.
    static let schema = FieldSchema(fields: ["group": .string])

    /// Runs `body` with a fresh store holding the 60 items, open for `body`'s length.
    static func withStore(_ factory: StoreFactory, _ body: (StoreUnderTest) async throws -> Void) async throws {
        try await factory.withStore { subject async throws in
            try await subject.store.declare(schema)
            try await subject.store.upsert((0..<60).map { Items.item(String(format: "item%02d", $0), seed: $0, metadata: ["group": "g\($0 % 2)"]) },
                                           schema: schema)
            try await body(subject)
        }
    }

    /// A strong blend, so one item's few events decide its first result.
    static let strong = RecommendationBlend(engagementWeight: 0.6, popularityWeight: 0)

    static func engine(_ store: StoreUnderTest, _ blend: RecommendationBlend = strong) async throws -> VisualSearchEngine {
        var configuration = VisualSearchEngine.Configuration()
        configuration.recommendations = blend
        configuration.engagementRefresh = .zero
        return try await store.engine(configuration)
    }

    static func recommend(_ engine: VisualSearchEngine, _ name: String,
                          _ configure: (inout SearchParameters) -> Void = { _ in }) async throws -> SearchResponse {
        var parameters = SearchParameters()
        parameters.includesScore = true
        configure(&parameters)
        var response = try await engine.recommendations(RecommendationsRequest(imageName: name, parameters: parameters))
        response.requestID = nil
        return response
    }

    /// The item least like `name` visually.
    static func farthest(from name: String, in engine: VisualSearchEngine) async throws -> String {
        try #require(try await recommend(engine, name) { $0.limit = 60; $0.deduplicates = false }.result.last?.imageName)
    }

    @Test("no events (cold start): every answer is today's visual answer, scores included", arguments: StoreFactory.databases)
    func coldStart(_ factory: StoreFactory) async throws {
        try await Self.withStore(factory) { store async throws in
            let blended = try await Self.engine(store, RecommendationBlend()), visual = try await Self.engine(store, .visualOnly)
            for name in ["item00", "item17", "item42"] {
                for configure: (inout SearchParameters) -> Void in [{ _ in }, { $0.limit = 25; $0.page = 2 },
                                                                      { $0.filters = [Filter(field: "group", value: "g1")] }] {
                    #expect(try await Self.recommend(blended, name, configure) == Self.recommend(visual, name, configure))
                }
            }
        }
    }

    @Test("items bought after the same item lead its recommendations; weight 0 gives the visual answer back", arguments: StoreFactory.databases)
    func coEngagementLeads(_ factory: StoreFactory) async throws {
        try await Self.withStore(factory) { store async throws in
            let visual = try await Self.engine(store, .visualOnly)
            let far = try await Self.farthest(from: "item10", in: visual)
            #expect(!(try await Self.recommend(visual, "item10").result.map(\.imageName).contains(far)))
            #expect(try await #require(store.collector).receive(ShopperEvents.boughtTogether("item10", far, sessions: 5)).allSatisfy { $0 == .accepted })

            let blended = try await Self.engine(store)
            let answer = try await Self.recommend(blended, "item10")
            #expect(answer.result.first?.imageName == far)
            #expect(!answer.result.map(\.imageName).contains("item10"))
            #expect(answer.total == 59)
            #expect(try await Self.recommend(Self.engine(store, RecommendationBlend(engagementWeight: 0, popularityWeight: 0)), "item10")
                    == Self.recommend(visual, "item10"))
        }
    }

    @Test("filters still apply to the items events bring in", arguments: StoreFactory.databases)
    func filtersApply(_ factory: StoreFactory) async throws {
        try await Self.withStore(factory) { store async throws in
            let far = try await Self.farthest(from: "item10", in: try await Self.engine(store, .visualOnly))
            #expect(try await #require(store.collector).receive(ShopperEvents.boughtTogether("item10", far, sessions: 5)).allSatisfy { $0 == .accepted })
            let otherGroup = (Int(far.dropFirst(4)) ?? 0) % 2 == 0 ? "g1" : "g0"  // item10 is in g0
            let answer = try await Self.recommend(try await Self.engine(store), "item10") { $0.filters = [Filter(field: "group", value: otherGroup)] }
            #expect(!answer.result.map(\.imageName).contains(far))
            #expect(answer.total == (otherGroup == "g0" ? 29 : 30))
        }
    }

    @Test("a new item (no events of its own) gets visual neighbours, with popular items lifted by the popularity share",
          arguments: StoreFactory.databases)
    func newItemUsesPopularity(_ factory: StoreFactory) async throws {
        try await Self.withStore(factory) { store async throws in
            let visual = try await Self.engine(store, .visualOnly)
            let neighbours = try await Self.recommend(visual, "item30") { $0.limit = 59; $0.deduplicates = false }.result
            let popular = neighbours[20].imageName  // visually mid-list
            #expect(try await #require(store.collector).receive(ShopperEvents.boughtTogether("item50", popular, sessions: 6)).allSatisfy { $0 == .accepted })
            let blend = RecommendationBlend(engagementWeight: 0.5, popularityWeight: 0.2)
            let answer = try await Self.recommend(try await Self.engine(store, blend), "item30") { $0.limit = 59; $0.deduplicates = false }
            let rank = try #require(answer.result.firstIndex { $0.imageName == popular })
            #expect(rank < 20)
            // Its score is exactly (1 − p) × visual + p × 1 (the most popular item); an item without events keeps (1 − p) × visual.
            let visualScore = try #require(neighbours[20].score), blendedScore = try #require(answer.result[rank].score)
            #expect(abs(blendedScore - (0.8 * visualScore + 0.2)) < 1e-4)
            let plain = try #require(answer.result.first { $0.imageName != popular && $0.imageName != "item50" })
            let plainVisual = try #require(neighbours.first { $0.imageName == plain.imageName }?.score)
            #expect(abs(try #require(plain.score) - 0.8 * plainVisual) < 1e-4)
        }
    }

    @Test("events collected after the engine started are read on the next request")
    func newEventsAreRead() async throws {
        try await Self.withStore(.sqlite) { store async throws in
            let engine = try await Self.engine(store)
            let far = try await Self.farthest(from: "item05", in: engine)
            #expect(try await Self.recommend(engine, "item05").result.first?.imageName != far)
            #expect(try await #require(store.collector).receive(ShopperEvents.boughtTogether("item05", far, sessions: 4)).allSatisfy { $0 == .accepted })
            #expect(try await Self.recommend(engine, "item05").result.first?.imageName == far)
        }
    }

    @Test("a score range is a condition on visual similarity: such a request is answered visually")
    func scoreRangeIsVisual() async throws {
        try await Self.withStore(.sqlite) { store async throws in
            let far = try await Self.farthest(from: "item10", in: try await Self.engine(store, .visualOnly))
            #expect(try await #require(store.collector).receive(ShopperEvents.boughtTogether("item10", far, sessions: 5)).allSatisfy { $0 == .accepted })
            let ranged: (inout SearchParameters) -> Void = { $0.scoreMin = 0.2; $0.limit = 30 }
            #expect(try await Self.recommend(Self.engine(store), "item10", ranged) == Self.recommend(Self.engine(store, .visualOnly), "item10", ranged))
        }
    }
}
