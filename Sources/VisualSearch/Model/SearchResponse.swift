import Foundation

/// A ViSearch response, encoding to exactly the JSON the hosted service
/// sends (docs/wire-protocol.md §3): `status`, `method`, `error` (a list of
/// strings), `page`, `limit`, `total`, `result`, `reqid`, and, when they
/// apply, `im_id`, `facets`, `product_types`, `objects`.
///
/// ```swift
/// let data = try JSONEncoder().encode(response)   // {"status":"OK","method":"search",...}
/// ```
public struct SearchResponse: Sendable, Hashable, Codable {
    /// `OK`, `warning` or `fail`.
    public enum Status: String, Sendable, Hashable, Codable {
        case ok = "OK", warning, fail

        public init(from decoder: any Decoder) throws {
            let text = try decoder.singleValueContainer().decode(String.self)
            switch text.lowercased() {
            case "ok": self = .ok
            case "warning": self = .warning
            default: self = .fail
            }
        }
    }

    public var status: Status
    /// The endpoint's name, e.g. `search`, `uploadsearch`.
    public var method: String
    /// Error messages; empty on success.
    public var error: [String]
    public var page: Int
    public var limit: Int
    /// All matches (after filters and the score range), not just this page.
    public var total: Int
    public var result: [ImageResult]
    /// The request id, which tracking events quote as `queryId`.
    public var requestID: String?
    /// The id under which an uploaded query image is cached (uploads only).
    public var imageID: String?
    public var facets: [Facet]?
    /// Detected objects, best first (`detection=all` or `detection={type}` on upload search).
    public var productTypes: [ProductType]?
    /// Every product type the detector can name (`detection` asked for).
    public var productTypesList: [ProductTypeListing]?
    /// Discover search: one entry per object.
    public var objects: [SearchObject]?
    /// Discover search: every type its objects can have.
    public var objectTypesList: [ProductTypeListing]?
    /// Set by the offline engine to say how it treated objects (discover search).
    public var offlineNote: String?
    /// Set by the offline engine: which ``SimilarityMode`` ranked the results.
    public var similarity: SimilarityMode?
    /// Set by the offline engine when ``similarity`` is not what the catalog
    /// was indexed for: its learned vectors could not be searched (no model,
    /// or another one), so colour answered — and why. The status stays `OK`
    /// (the SDKs treat any other status as a failure).
    public var similarityNote: String?

    enum CodingKeys: String, CodingKey {
        case status, method, error, page, limit, total, result, facets, objects, similarity, similarityNote = "similarity_note"
        case requestID = "reqid", imageID = "im_id", productTypes = "product_types", offlineNote = "offline_note"
        case productTypesList = "product_types_list", objectTypesList = "object_types_list"
    }

    /// Creates a response.
    public init(status: Status = .ok, method: String, error: [String] = [], page: Int, limit: Int, total: Int,
                result: [ImageResult], requestID: String? = nil, imageID: String? = nil, facets: [Facet]? = nil,
                productTypes: [ProductType]? = nil, productTypesList: [ProductTypeListing]? = nil, objects: [SearchObject]? = nil,
                objectTypesList: [ProductTypeListing]? = nil, offlineNote: String? = nil, similarity: SimilarityMode? = nil) {
        self.status = status
        self.method = method
        self.error = error
        self.page = page
        self.limit = limit
        self.total = total
        self.result = result
        self.requestID = requestID
        self.imageID = imageID
        self.facets = facets
        self.productTypes = productTypes
        self.productTypesList = productTypesList
        self.objects = objects
        self.objectTypesList = objectTypesList
        self.offlineNote = offlineNote
        self.similarity = similarity
    }

    /// The failure shape: `status` fail, the message in `error`, zero counts.
    public static func failure(method: String, error: VisualSearchError, requestID: String? = nil) -> SearchResponse {
        SearchResponse(status: .fail, method: method, error: [error.message], page: 0, limit: 0, total: 0,
                       result: [], requestID: requestID)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        status = try container.decode(Status.self, forKey: .status)
        method = try container.decodeIfPresent(String.self, forKey: .method) ?? ""
        error = (try? container.decodeIfPresent([String].self, forKey: .error)) ?? []
        page = try container.decodeIfPresent(Int.self, forKey: .page) ?? 0
        limit = try container.decodeIfPresent(Int.self, forKey: .limit) ?? 0
        total = try container.decodeIfPresent(Int.self, forKey: .total) ?? 0
        result = try container.decodeIfPresent([ImageResult].self, forKey: .result) ?? []
        requestID = try container.decodeIfPresent(String.self, forKey: .requestID)
        imageID = try container.decodeIfPresent(String.self, forKey: .imageID)
        facets = try container.decodeIfPresent([Facet].self, forKey: .facets)
        productTypes = try container.decodeIfPresent([ProductType].self, forKey: .productTypes)
        objects = try container.decodeIfPresent([SearchObject].self, forKey: .objects)
        productTypesList = try? container.decodeIfPresent([ProductTypeListing].self, forKey: .productTypesList)
        objectTypesList = try? container.decodeIfPresent([ProductTypeListing].self, forKey: .objectTypesList)
        offlineNote = try container.decodeIfPresent(String.self, forKey: .offlineNote)
        similarity = try? container.decodeIfPresent(SimilarityMode.self, forKey: .similarity)
        similarityNote = try? container.decodeIfPresent(String.self, forKey: .similarityNote)
    }
}

extension SearchResponse {
    /// The response with its boxes (`objects[].box`, `product_types[].box`)
    /// carried back from an image that was prepared at `scale` (the SDKs'
    /// upload preparation shrinks it) to the caller's own image: each
    /// coordinate divided by `scale` and rounded. At scale 1 nothing changes.
    public func boxesInCallerPixels(preparedAt scale: Double) -> SearchResponse {
        guard scale > 0, scale != 1 else { return self }
        func unscaled(_ box: [Int]) -> [Int] { box.map { Int((Double($0) / scale).rounded()) } }
        var copy = self
        copy.objects = objects?.map { object in
            var object = object
            object.box = unscaled(object.box)
            return object
        }
        copy.productTypes = productTypes?.map { type in
            var type = type
            type.box = unscaled(type.box)
            return type
        }
        return copy
    }
}

/// One result: `{"im_name": ..., "score": ..., "value_map": {...}}`.
public struct ImageResult: Sendable, Hashable, Codable {
    /// The image's name in the catalog.
    public var imageName: String
    /// Similarity in [0, 1], present when `score=true`.
    public var score: Float?
    /// Requested metadata, values as strings (as the hosted service sends them).
    public var valueMap: [String: String]?

    enum CodingKeys: String, CodingKey {
        case imageName = "im_name", score, valueMap = "value_map"
    }

    /// Creates a result.
    public init(imageName: String, score: Float? = nil, valueMap: [String: String]? = nil) {
        self.imageName = imageName
        self.score = score
        self.valueMap = valueMap
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        imageName = try container.decode(String.self, forKey: .imageName)
        score = try container.decodeIfPresent(Float.self, forKey: .score)
        valueMap = try container.decodeLenientStringMap(forKey: .valueMap)
    }
}

/// A facet: value counts for string/text fields, a min/max range for numbers.
///
/// Range bounds are integer-valued strings (`"9"`, `"420"`), which every
/// SDK parses (the Swift SDK breaks on JSON numbers); float fields are widened
/// to the enclosing integers.
public struct Facet: Sendable, Hashable, Codable {
    /// One value of a string facet.
    public struct Item: Sendable, Hashable, Codable {
        public var value: String
        /// Present only with `facets_show_count=true`.
        public var count: Int?
        public init(value: String, count: Int?) {
            self.value = value
            self.count = count
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            value = try container.decodeLenientString(forKey: .value)
            count = try container.decodeIfPresent(Int.self, forKey: .count)
        }
    }

    /// The bounds of a numeric facet.
    public struct Range: Sendable, Hashable, Codable {
        public var min: String
        public var max: String
        public init(min: String, max: String) {
            self.min = min
            self.max = max
        }

        /// Accepts strings (the service's convention) and numbers (Java fixtures).
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            min = try container.decodeLenientString(forKey: .min)
            max = try container.decodeLenientString(forKey: .max)
        }
    }

    public var key: String
    public var items: [Item]?
    public var range: Range?

    public init(key: String, items: [Item]? = nil, range: Range? = nil) {
        self.key = key
        self.items = items
        self.range = range
    }
}

/// A detected product type: `{type, score, box:[x1,y1,x2,y2], attributes:{}}`.
public struct ProductType: Sendable, Hashable, Codable {
    public var type: String
    public var score: Float
    public var box: [Int]
    /// Always present (the Swift SDK force-unwraps it).
    public var attributes: [String: String]

    public init(type: String, score: Float, box: [Int], attributes: [String: String] = [:]) {
        self.type = type
        self.score = score
        self.box = box
        self.attributes = attributes
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        type = try container.decode(String.self, forKey: .type)
        score = try container.decodeIfPresent(Float.self, forKey: .score) ?? 0
        box = try container.decodeIfPresent([Int].self, forKey: .box) ?? []
        attributes = try container.decodeLenientStringMap(forKey: .attributes) ?? [:]
    }
}

/// A type the detector can name: `{type, attributes_list:{attr:[values]}}`
/// (`product_types_list`, `object_types_list`). The offline engine names no
/// attributes: `attributes_list` is always `{}` (the Swift SDK force-unwraps it).
public struct ProductTypeListing: Sendable, Hashable, Codable {
    public var type: String
    public var attributesList: [String: [String]]

    enum CodingKeys: String, CodingKey {
        case type, attributesList = "attributes_list"
    }

    public init(type: String, attributesList: [String: [String]] = [:]) {
        self.type = type
        self.attributesList = attributesList
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        type = try container.decode(String.self, forKey: .type)
        attributesList = (try? container.decodeIfPresent([String: [String]].self, forKey: .attributesList)) ?? [:]
    }
}

/// One object of a discover search, with its own results.
public struct SearchObject: Sendable, Hashable, Codable {
    public var type: String
    public var score: Float
    public var box: [Int]
    public var attributes: [String: String]
    public var total: Int
    public var result: [ImageResult]
    public var facets: [Facet]?

    public init(type: String, score: Float, box: [Int], attributes: [String: String] = [:], total: Int,
                result: [ImageResult], facets: [Facet]? = nil) {
        self.type = type
        self.score = score
        self.box = box
        self.attributes = attributes
        self.total = total
        self.result = result
        self.facets = facets
    }
}

/// A response that carries the request id (`reqid`) tracking events quote.
public protocol RequestIdentified {
    var requestID: String? { get set }
}

extension SearchResponse: RequestIdentified {}
extension ProductSearchResponse: RequestIdentified {}
