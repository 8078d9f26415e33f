/// Engagement per query and per product, from collected events.
///
/// Definitions: **views** = `view` + `product_view` events; **clicks** =
/// `click` + `product_click`; **click-through rate** = clicks / views (nil
/// without views); **conversion** = transactions / clicks (nil without clicks).
public struct EventStats: Sendable, Hashable, Codable {
    /// One query's (by `queryId`) or one product's (by `pid`, the `im_name`) counts.
    public struct Row: Sendable, Hashable, Codable {
        public var key: String
        public var views: Int
        public var clicks: Int
        public var addToCarts: Int
        public var transactions: Int
        public var clickThroughRate: Double?
        public var conversion: Double?

        public init(key: String, views: Int, clicks: Int, addToCarts: Int, transactions: Int) {
            self.key = key
            self.views = views
            self.clicks = clicks
            self.addToCarts = addToCarts
            self.transactions = transactions
            clickThroughRate = views > 0 ? Double(clicks) / Double(views) : nil
            conversion = clicks > 0 ? Double(transactions) / Double(clicks) : nil
        }

        enum CodingKeys: String, CodingKey {
            case key, views, clicks, addToCarts = "add_to_carts", transactions
            case clickThroughRate = "ctr", conversion
        }
    }

    /// Events counted.
    public var total: Int
    /// Events per action.
    public var actions: [String: Int]
    /// Per `queryId`, most clicked first.
    public var queries: [Row]
    /// Per `pid` (`im_name`), most clicked first.
    public var products: [Row]

    public init(total: Int, actions: [String: Int], queries: [Row], products: [Row]) {
        self.total = total
        self.actions = actions
        self.queries = queries
        self.products = products
    }
}
