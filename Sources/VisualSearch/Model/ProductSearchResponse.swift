/// A ProductSearch response (docs/wire-protocol.md §4.4): products with
/// `product_id`, `main_image_url` and `data`, and `error` as an object.
///
/// The offline engine maps catalog images to products: `product_id` is the
/// `im_name`, `main_image_url` the indexed source, `data` the metadata.
public struct ProductSearchResponse: Sendable, Hashable, Codable {
    /// `{code, message}`.
    public struct ErrorInfo: Sendable, Hashable, Codable {
        public var code: Int
        public var message: String
        public init(code: Int, message: String) {
            self.code = code
            self.message = message
        }
    }

    /// One product.
    public struct Product: Sendable, Hashable, Codable {
        public var productID: String
        public var mainImageURL: String?
        public var score: Float?
        /// Catalog fields; any JSON (the hosted service nests objects such as prices).
        public var data: [String: JSONValue]?

        enum CodingKeys: String, CodingKey {
            case productID = "product_id", mainImageURL = "main_image_url", score, data
        }

        public init(productID: String, mainImageURL: String? = nil, score: Float? = nil, data: [String: JSONValue]? = nil) {
            self.productID = productID
            self.mainImageURL = mainImageURL
            self.score = score
            self.data = data
        }
    }

    public var requestID: String?
    public var status: SearchResponse.Status
    public var method: String
    public var error: ErrorInfo?
    public var imageID: String?
    public var page: Int?
    public var limit: Int?
    public var total: Int?
    public var productTypes: [ProductType]?
    public var result: [Product]?
    public var facets: [Facet]?
    /// Recommendations: the query product.
    public var productInfo: Product?
    /// `{catalog field: client field}`, with `return_fields_mapping=true`.
    public var catalogFieldsMapping: [String: String]?

    enum CodingKeys: String, CodingKey {
        case requestID = "reqid", status, method, error, imageID = "im_id", page, limit, total
        case productTypes = "product_types", result, facets, productInfo = "product_info"
        case catalogFieldsMapping = "catalog_fields_mapping"
    }

    public init(requestID: String?, status: SearchResponse.Status, method: String, error: ErrorInfo? = nil,
                imageID: String? = nil, page: Int? = nil, limit: Int? = nil, total: Int? = nil,
                productTypes: [ProductType]? = nil, result: [Product]? = nil, facets: [Facet]? = nil,
                productInfo: Product? = nil) {
        self.requestID = requestID
        self.status = status
        self.method = method
        self.error = error
        self.imageID = imageID
        self.page = page
        self.limit = limit
        self.total = total
        self.productTypes = productTypes
        self.result = result
        self.facets = facets
        self.productInfo = productInfo
    }
}
