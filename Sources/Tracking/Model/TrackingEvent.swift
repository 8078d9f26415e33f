import Foundation

/// One analytics event, with every field of the ViSearch guide's table
/// (§7.2) as a typed property. Field names are the guide's; the short wire
/// names (`cat`, `c`, `transId`, …) live only in ``EventWireFormat``.
///
/// ```swift
/// let click = TrackingEvent.productClick(queryId: response.requestID!, pid: "dress_17",
///                                        imgUrl: "https://cdn.example/dress_17.jpg", pos: 3)
/// try await tracker.track(click)
/// ```
public struct TrackingEvent: Sendable, Hashable, Codable {
    public var action: TrackingAction
    /// The `reqid` of the search this event follows.
    public var queryId: String?
    /// Product id (usually the `im_name`).
    public var pid: String?
    /// Product image URL (usually the `im_url`).
    public var imgUrl: String?
    /// Position in the results, from 1.
    public var pos: Int?
    public var transactionId: String?
    /// Transaction value, e.g. the order total.
    public var value: Double?
    /// User/device id; the tracker fills its persisted uid when nil.
    public var uid: String?
    /// Session id; the tracker fills it.
    public var sid: String?
    public var category: String?
    public var name: String?
    public var label: String?
    public var fromReqId: String?
    public var source: String?
    public var brand: String?
    public var price: Double?
    /// ISO 4217 code, e.g. `USD`.
    public var currency: String?
    public var productUrl: String?
    public var campaign: String?
    public var adGroup: String?
    public var creative: String?
    public var n1: Double?
    public var n2: Double?
    public var n3: Double?
    public var n4: Double?
    public var n5: Double?
    public var s1: String?
    public var s2: String?
    public var s3: String?
    public var s4: String?
    public var s5: String?
    /// Custom JSON text (≤ 512 bytes).
    public var json: String?
    /// A unique id the receiving side deduplicates on; the tracker fills a UUID when nil.
    public var eventID: String?
    /// Milliseconds since 1970; the tracker fills the time of `track` when nil.
    public var timestamp: Int64?

    /// An event with only its action set.
    public init(action: TrackingAction) {
        self.action = action
    }

    /// A click on a product in the results.
    public static func productClick(queryId: String, pid: String, imgUrl: String, pos: Int) -> TrackingEvent {
        product(.productClick, queryId: queryId, pid: pid, imgUrl: imgUrl, pos: pos)
    }

    /// A product shown in the results (an impression).
    public static func productView(queryId: String, pid: String, imgUrl: String, pos: Int) -> TrackingEvent {
        product(.productView, queryId: queryId, pid: pid, imgUrl: imgUrl, pos: pos)
    }

    /// A product added to the cart.
    public static func addToCart(queryId: String, pid: String, imgUrl: String, pos: Int) -> TrackingEvent {
        product(.addToCart, queryId: queryId, pid: pid, imgUrl: imgUrl, pos: pos)
    }

    /// A purchase.
    public static func transaction(queryId: String, transactionId: String, value: Double) -> TrackingEvent {
        var event = TrackingEvent(action: .transaction)
        event.queryId = queryId
        event.transactionId = transactionId
        event.value = value
        return event
    }

    /// Results shown for a query.
    public static func resultLoad(queryId: String, pid: String? = nil) -> TrackingEvent {
        var event = TrackingEvent(action: .resultLoad)
        event.queryId = queryId
        event.pid = pid
        return event
    }

    /// A generic click or view linked to a query.
    public static func linked(_ action: TrackingAction, queryId: String) -> TrackingEvent {
        var event = TrackingEvent(action: action)
        event.queryId = queryId
        return event
    }

    static func product(_ action: TrackingAction, queryId: String, pid: String, imgUrl: String, pos: Int) -> TrackingEvent {
        var event = TrackingEvent(action: action)
        event.queryId = queryId
        event.pid = pid
        event.imgUrl = imgUrl
        event.pos = pos
        return event
    }
}
