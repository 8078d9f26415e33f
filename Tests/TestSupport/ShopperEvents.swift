import Tracking

/// Valid collector events for recommendation tests: every field the
/// validator requires filled in, ids deterministic so a resent log is stored once.
public enum ShopperEvents {
    /// One event on `item` after query `query` in session `session`.
    public static func event(_ action: TrackingAction, _ item: String, query: String, session: String) -> TrackingEvent {
        var event = TrackingEvent(action: action)
        event.pid = item
        event.queryId = query
        event.sid = session
        event.imgUrl = "/images/\(item).jpg"
        event.pos = 1
        if action == .transaction {
            event.transactionId = "t-\(query)-\(item)"
            event.value = 10
        }
        event.eventID = "\(session)-\(query)-\(action.rawValue)-\(item)"
        return event
    }

    /// `sessions` sessions in which a shopper clicks `a` and then buys `b`.
    public static func boughtTogether(_ a: String, _ b: String, sessions: Int, tag: String = "") -> [TrackingEvent] {
        (0..<sessions).flatMap { session in
            [event(.productClick, a, query: "q\(tag)\(session)", session: "s\(tag)\(session)"),
             event(.transaction, b, query: "q\(tag)\(session)", session: "s\(tag)\(session)")]
        }
    }
}
