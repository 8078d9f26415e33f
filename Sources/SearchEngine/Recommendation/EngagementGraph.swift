import Foundation
import Tracking

/// What shoppers did with catalog items, as the collector recorded it:
/// which items were engaged with after the same query or in the same
/// session, and how much each item was engaged with overall.
///
/// An event counts when it names a product (`pid`, the `im_name`) and its
/// action carries a weight in ``EngagementWeights`` (a click 1, an add to
/// cart 3, a purchase 5 by default; impressions count nothing). It belongs to
/// two groups: the query it follows (`queryId`) and the session it happened
/// in (`sid`). In a group an item weighs its strongest action (a click then a
/// purchase of the same item is a purchase, not six).
///
/// - ``coEngagement(of:limit:)``: the items engaged with in the same groups
///   as the item, by how much (relative to the strongest, 0…1) — "people who
///   engaged with this also engaged with that".
/// - ``popularity(of:)``: each of the ``popularLimit`` most engaged items'
///   total weight relative to the most engaged one's (0…1); 0 for every other item.
///
/// Built incrementally (``add(_:)``), so a collector's new events are folded
/// in without rereading the old ones.
public struct EngagementGraph: Sendable {
    /// How many of the most engaged items have a popularity above 0.
    public static let popularLimit = 100

    public let weights: EngagementWeights
    /// Group key (`q:` + query id, `s:` + session id) → item → weight.
    private var groups: [String: [String: Float]] = [:]
    /// Item → its groups' keys.
    private var groupsOfItem: [String: [String]] = [:]
    /// Item → the sum of the weights of its events.
    private var totals: [String: Float] = [:]
    /// The ``popularLimit`` largest totals, by item; recomputed lazily.
    private var popular: [String: Float]? = [:]

    /// Events folded in so far (those that counted).
    public private(set) var eventCount = 0

    public init(weights: EngagementWeights = EngagementWeights()) {
        self.weights = weights
    }

    /// True when no event has counted: recommendations are visual only.
    public var isEmpty: Bool { eventCount == 0 }

    /// Folds events in; events without a product or a weight are skipped.
    public mutating func add(_ events: some Sequence<TrackingEvent>) {
        for event in events {
            guard let item = event.pid, !item.isEmpty else { continue }
            let weight = weights.weight(of: event.action)
            guard weight > 0 else { continue }
            eventCount += 1
            totals[item, default: 0] += weight
            popular = nil
            if let query = event.queryId, !query.isEmpty { engage(item, in: "q:" + query, weight: weight) }
            if let session = event.sid, !session.isEmpty { engage(item, in: "s:" + session, weight: weight) }
        }
    }

    private mutating func engage(_ item: String, in group: String, weight: Float) {
        let old = groups[group]?[item]
        guard (old ?? 0) < weight else { return }
        groups[group, default: [:]][item] = weight
        if old == nil { groupsOfItem[item, default: []].append(group) }
    }

    /// The items most co-engaged with `item` (itself left out), at most
    /// `limit`, strongest first (ties by name), each scored 0…1: how much
    /// they were engaged with in the groups `item` was engaged in (the sum
    /// over shared groups of the two weights' product), relative to the
    /// strongest, which scores 1. Empty for an item with no events.
    ///
    /// Raw co-occurrence, not a cosine: dividing by the other item's total
    /// engagement would remove the preference for what people engage with
    /// most, which is what the next click follows (bench/recommend.py).
    public func coEngagement(of item: String, limit: Int) -> [(item: String, score: Float)] {
        guard let keys = groupsOfItem[item] else { return [] }
        var dots: [String: Float] = [:]
        for key in keys {
            guard let members = groups[key], let own = members[item] else { continue }
            for (other, weight) in members where other != item { dots[other, default: 0] += own * weight }
        }
        guard let strongest = dots.values.max(), strongest > 0 else { return [] }
        let ranked = dots.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.prefix(max(0, limit))
        return ranked.map { ($0.key, $0.value / strongest) }
    }

    /// An item's popularity, 0…1: its total weight relative to the most
    /// engaged item's, for the ``popularLimit`` most engaged items; 0 for the others.
    public func popularity(of item: String) -> Float { popularItems()[item] ?? 0 }

    /// The ``popularLimit`` most engaged items with their popularity.
    public func popularItems() -> [String: Float] {
        if let popular { return popular }
        let top = totals.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.prefix(Self.popularLimit)
        guard let largest = top.first?.value, largest > 0 else { return [:] }
        return Dictionary(uniqueKeysWithValues: top.map { ($0.key, $0.value / largest) })
    }
    /// Recomputes the popular items now, so later reads of this value need no work.
    mutating func settle() {
        if popular == nil { popular = popularItems() }
    }
}

