import Tracking

/// How much each action says about what a shopper wants, for
/// ``EngagementGraph``: a click 1, an add to wishlist 2, an add to cart 3, a
/// purchase 5. Impressions (`view`, `product_view`, `result_load`) and
/// searches say nothing about an item and weigh 0, as do custom actions.
public struct EngagementWeights: Sendable, Hashable {
    public var click: Float = 1
    public var addToWishlist: Float = 2
    public var addToCart: Float = 3
    public var purchase: Float = 5

    public init() {}

    /// The weight of one event with this action.
    public func weight(of action: TrackingAction) -> Float {
        switch action {
        case .click, .productClick: click
        case .addToWishlist: addToWishlist
        case .addToCart: addToCart
        case .transaction: purchase
        case .search, .view, .productView, .resultLoad, .custom: 0
        }
    }
}
