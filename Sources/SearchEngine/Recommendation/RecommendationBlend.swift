import VisualSearch

/// How "you may also like" weighs what shoppers did against how items look.
///
/// A recommendation for item *q* scores each candidate *c* by
///
///     (1 − e − p) · visual(q, c)  +  e · coEngagement(q, c)  +  p · popularity(c)
///
/// where `visual` is the colour-feature score of search, `coEngagement` how
/// much *c* was engaged with in the queries and sessions *q* was, relative
/// to *q*'s strongest co-engaged item (``EngagementGraph``), and `popularity`
/// the engagement of the most engaged items relative to the first. When *q* has no
/// events of its own (a new item) the engagement share goes back to the
/// visual score — `(1 − p) · visual + p · popularity` — so popular items lead
/// among equally similar ones. With no events in the catalog at all, or both
/// weights 0, the score is the visual score and the answers are exactly those
/// of visual similarity. Candidates without events (a new item as a
/// candidate) compete on their visual score.
///
/// The defaults were chosen on the *tune* event log of bench/recommend.py
/// and are reported on its held-out log (bench/RESULTS.md,
/// docs/decisions.md "Recommendations that learn from events").
///
/// A score range (`score_min`/`score_max`) is a condition on visual
/// similarity: a request with one is answered by visual similarity alone.
public struct RecommendationBlend: Sendable, Hashable {
    /// The co-engagement share `e` (0…1): 0.2 by default.
    public var engagementWeight: Float
    /// The popularity share `p` (0…1, `e + p ≤ 1`): 0 by default — on the
    /// simulated logs every popularity share lost to the visual neighbours
    /// (popularity is one list for every item, not per taste); a shop whose
    /// sales follow a few bestsellers can turn it on.
    public var popularityWeight: Float

    /// How many co-engaged items one item's recommendations consider.
    public static let coEngagedLimit = 200

    public init(engagementWeight: Float = 0.2, popularityWeight: Float = 0) {
        self.engagementWeight = engagementWeight
        self.popularityWeight = popularityWeight
    }

    /// Visual similarity only: events are not read.
    public static let visualOnly = RecommendationBlend(engagementWeight: 0, popularityWeight: 0)

    /// True when events can change an answer.
    public var usesEvents: Bool { engagementWeight > 0 || popularityWeight > 0 }

    /// Refuses weights outside 0…1 or summing above 1, naming the setting.
    public func validate() throws(VisualSearchError) {
        for (name, weight) in [("engagement_weight", engagementWeight), ("popularity_weight", popularityWeight)]
        where !(0...1).contains(weight) {
            throw .invalidParameter(name: name, reason: "\(weight) is not in 0…1")
        }
        guard engagementWeight + popularityWeight <= 1 else {
            throw .invalidParameter(name: "engagement_weight", reason: "engagement_weight + popularity_weight is \(engagementWeight + popularityWeight), above 1")
        }
    }

    /// The terms for recommendations of `item`; nil when the answer is visual only.
    public func terms(for item: String, in graph: EngagementGraph) -> BlendTerms? {
        guard usesEvents, !graph.isEmpty else { return nil }
        let coEngaged = engagementWeight > 0 ? graph.coEngagement(of: item, limit: Self.coEngagedLimit) : []
        let engagement = coEngaged.isEmpty ? 0 : engagementWeight
        var boosts: [String: Float] = [:]
        if popularityWeight > 0 {
            for (other, popularity) in graph.popularItems() { boosts[other] = popularityWeight * popularity }
        }
        for (other, score) in coEngaged { boosts[other, default: 0] += engagement * score }
        boosts[item] = nil
        return BlendTerms(visualShare: 1 - engagement - popularityWeight, boosts: boosts)
    }
}

/// One query item's blend: every candidate's visual score times
/// ``visualShare``, plus its boost from events (most candidates have none).
public struct BlendTerms: Sendable, Hashable {
    public var visualShare: Float
    /// Item name → what events add to its score.
    public var boosts: [String: Float]

    /// A candidate's blended score.
    public func score(visual: Float, item: String) -> Float {
        visualShare * visual + (boosts[item] ?? 0)
    }
}
