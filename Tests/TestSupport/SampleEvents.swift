import Tracking

/// A product click, different for each `index` in its query, product and position
/// (three queries, five products): events for the tracking and collector suites.
public func click(_ index: Int) -> TrackingEvent {
    .productClick(queryId: "q\(index % 3)", pid: "p\(index % 5)", imgUrl: "https://cdn.example/p.jpg", pos: 1 + index % 4)
}
