import Foundation
import Synchronization
import Tracking
import VisualSearch

/// The collector's events as the engine last read them: the graph and where
/// the store's order was when it was read.
struct EngagementCache: Sendable {
    var graph = EngagementGraph()
    /// The last ``StoredEvent/cursor`` folded in.
    var cursor: Int64 = 0
    /// When the store was last asked for new events.
    var checked: ContinuousClock.Instant?
}

extension VisualSearchEngine {
    /// Events read per page when catching up with the collector.
    static let engagementPage = 5000

    /// The blend for recommendations of `item`: nil (visual only) when the
    /// engine is set to ignore events or was given no collector, the request
    /// has a score range, or no event counts.
    func blendTerms(for item: String, parameters: SearchParameters) async throws(VisualSearchError) -> BlendTerms? {
        let blend = configuration.recommendations
        guard blend.usesEvents, parameters.scoreMin == nil, parameters.scoreMax == nil,
              let collector = engagementSource else { return nil }
        try blend.validate()
        return blend.terms(for: item, in: try await engagementGraph(from: collector))
    }

    /// The graph with every event the collector holds folded in; the store is
    /// asked only for events after the last one read, at most once per
    /// ``Configuration/engagementRefresh``.
    func engagementGraph(from collector: any CollectorStore) async throws(VisualSearchError) -> EngagementGraph {
        let now = ContinuousClock.now
        let current = engagement.withLock { $0 }
        if let checked = current.checked, now - checked < configuration.engagementRefresh { return current.graph }
        var graph = current.graph
        var cursor = current.cursor
        while true {
            let page: [StoredEvent]
            do { page = try await collector.storedEvents(after: cursor, limit: Self.engagementPage) } catch {
                throw .storage(reason: "reading the collector's events for recommendations: \(error.description)", sql: nil)
            }
            graph.add(page.lazy.map(\.event))
            cursor = page.last?.cursor ?? cursor
            if page.count < Self.engagementPage { break }
        }
        graph.settle()
        return engagement.withLock { cache in
            // Another request may have caught up meanwhile: keep whichever read further.
            if cache.cursor <= cursor { cache = EngagementCache(graph: graph, cursor: cursor, checked: now) }
            return cache.graph
        }
    }
}

extension BlendTerms {
    /// Blends visual `scores` in place: `scores[i]` belongs to `rows[i]` of
    /// `index` (to row `i` when `rows` is nil; `rows` sorted ascending).
    func apply(to scores: inout [Float], rows: [Int]?, index: FeatureIndex) {
        for position in scores.indices { scores[position] *= visualShare }
        for (name, boost) in boosts {
            guard let row = index.row(named: name) else { continue }
            let position: Int?
            if let rows {
                var low = 0, high = rows.count
                while low < high {
                    let middle = (low + high) / 2
                    if rows[middle] < row { low = middle + 1 } else { high = middle }
                }
                position = low < rows.count && rows[low] == row ? low : nil
            } else {
                position = row
            }
            if let position { scores[position] += boost }
        }
    }
}
