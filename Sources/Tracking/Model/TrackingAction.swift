/// What an event records. The predefined actions carry the analytics
/// meaning the stats rely on; any other string is a custom action.
///
/// ```swift
/// TrackingAction(rawValue: "product_click")   // .productClick
/// TrackingAction(rawValue: "open_app")        // .custom("open_app")
/// ```
public enum TrackingAction: Sendable, Hashable, Codable, CustomStringConvertible {
    case search, click, view, productClick, productView, addToCart, addToWishlist, transaction, resultLoad
    case custom(String)

    /// The wire string (`product_click`, …).
    public var rawValue: String {
        switch self {
        case .search: "search"
        case .click: "click"
        case .view: "view"
        case .productClick: "product_click"
        case .productView: "product_view"
        case .addToCart: "add_to_cart"
        case .addToWishlist: "add_to_wishlist"
        case .transaction: "transaction"
        case .resultLoad: "result_load"
        case .custom(let name): name
        }
    }

    public init(rawValue: String) {
        switch rawValue {
        case "search": self = .search
        case "click": self = .click
        case "view": self = .view
        case "product_click": self = .productClick
        case "product_view": self = .productView
        case "add_to_cart": self = .addToCart
        case "add_to_wishlist": self = .addToWishlist
        case "transaction": self = .transaction
        case "result_load": self = .resultLoad
        default: self = .custom(rawValue)
        }
    }

    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var description: String { rawValue }

    /// Whether the action is about one product (needs pid, imgUrl and pos).
    public var isProductAction: Bool {
        switch self {
        case .productClick, .productView, .addToCart, .addToWishlist: true
        default: false
        }
    }
}
