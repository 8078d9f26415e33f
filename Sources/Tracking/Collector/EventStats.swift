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
        /// A query's picture: the `imgUrl` its `result_load` event carried (the query image, when it had one).
        public var imageURL: String?
        /// A query's description: the `label` its `result_load` event carried (`similar`, `upload`, `color:c45b3b`…).
        public var label: String?

        public init(key: String, views: Int, clicks: Int, addToCarts: Int, transactions: Int, imageURL: String? = nil, label: String? = nil) {
            self.key = key
            self.imageURL = imageURL
            self.label = label
            self.views = views
            self.clicks = clicks
            self.addToCarts = addToCarts
            self.transactions = transactions
            clickThroughRate = views > 0 ? Double(clicks) / Double(views) : nil
            conversion = clicks > 0 ? Double(transactions) / Double(clicks) : nil
        }

        enum CodingKeys: String, CodingKey {
            case key, views, clicks, addToCarts = "add_to_carts", transactions
            case clickThroughRate = "ctr", conversion, imageURL = "img_url", label
        }
    }

    /// Events counted.
    public var total: Int
    /// Events per action.
    public var actions: [String: Int]
    /// Per `queryId`, most clicked first, with the query's picture and label when its `result_load` had them.
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
