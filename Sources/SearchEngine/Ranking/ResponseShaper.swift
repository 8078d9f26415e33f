import VisualSearch

/// Builds the API's responses from a ranked page: names, scores rounded to
/// six decimals (only with `score=true`), `value_map` (only when fields were
/// asked for), facets, and the ProductSearch product shape. Pure: table-tested.
public struct ResponseShaper: Sendable {
    /// What the ranked rows are called: their names and catalog ids.
    public struct Rows: Sendable {
        public var names: [String]
        public var ids: [Int64]

        public init(names: [String], ids: [Int64]) {
            self.names = names
            self.ids = ids
        }
    }

    public let parameters: SearchParameters

    public init(parameters: SearchParameters) {
        self.parameters = parameters
    }

    /// Whether the response carries `value_map`s.
    public var wantsValues: Bool { parameters.returnsAllFields || !parameters.fields.isEmpty }

    /// The fields to read for value maps: nil for all.
    public var valueFields: [String]? { parameters.returnsAllFields ? nil : parameters.fields }

    /// A score as the response shows it: six decimals.
    public static func rounded(_ score: Float) -> Float {
        (score * 1_000_000).rounded() / 1_000_000
    }

    /// A ViSearch response for a ranked page. A facet error becomes a
    /// `warning` with the message, as the hosted service does.
    public func searchResponse(method: String, ranked: Ranking.Ranked, rows: Rows, valueMaps: [Int64: [String: String]],
                               facets: Result<[Facet], VisualSearchError>?, requestID: String) -> SearchResponse {
        let results = ranked.page.map { entry in
            ImageResult(imageName: rows.names[entry.row],
                        score: parameters.includesScore ? ResponseShaper.rounded(entry.score) : nil,
                        valueMap: wantsValues ? (valueMaps[rows.ids[entry.row]] ?? [:]) : nil)
        }
        var errors: [String] = []
        var facetList: [Facet]?
        switch facets {
        case .success(let list)?: facetList = list
        case .failure(let error)?: errors.append(error.message)
        case nil: break
        }
        return SearchResponse(status: errors.isEmpty ? .ok : .warning, method: method, error: errors,
                              page: parameters.page, limit: parameters.limit, total: ranked.total, result: results,
                              requestID: requestID, facets: facetList)
    }

    /// The ProductSearch shape of a ViSearch response: `product_id` is the
    /// `im_name`, `main_image_url` the indexed source, `data` the metadata.
    public static func productResponse(_ response: SearchResponse, method: String,
                                       source: (String) -> String?) -> ProductSearchResponse {
        let products = response.result.map { result in
            ProductSearchResponse.Product(productID: result.imageName, mainImageURL: source(result.imageName),
                                          score: result.score, data: result.valueMap?.mapValues { JSONValue.string($0) })
        }
        return ProductSearchResponse(requestID: response.requestID, status: .ok, method: method, imageID: response.imageID,
                                     page: response.page, limit: response.limit, total: response.total, productTypes: [],
                                     result: products, facets: response.facets)
    }
}
