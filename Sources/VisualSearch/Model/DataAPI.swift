import Foundation

/// One image for the data API's `/insert`: `im_name[i]`, `im_url[i]` and
/// metadata `field[i]` on the wire.
///
/// ```swift
/// let item = InsertItem(imageName: "dress_1", imageURL: "https://cdn.example/dress_1.jpg", metadata: ["brand": "acme"])
/// ```
public struct InsertItem: Sendable, Hashable, Codable {
    public var imageName: String
    /// `http(s)://` or `file://` URL (the local server also takes a plain path).
    public var imageURL: String
    public var metadata: [String: String]

    public init(imageName: String, imageURL: String, metadata: [String: String] = [:]) {
        self.imageName = imageName
        self.imageURL = imageURL
        self.metadata = metadata
    }

    /// Encodes items as indexed form fields (`im_name[0]=…&im_url[0]=…&brand[0]=…`).
    public static func wireQuery(_ items: [InsertItem]) -> WireQuery {
        var query = WireQuery()
        for (index, item) in items.enumerated() {
            query.append("im_name[\(index)]", item.imageName)
            query.append("im_url[\(index)]", item.imageURL)
            for (field, value) in item.metadata.sorted(by: { $0.key < $1.key }) { query.append("\(field)[\(index)]", value) }
        }
        return query
    }

    /// Reads indexed form fields back; every index needs `im_name` and `im_url`.
    /// - Throws: ``VisualSearchError/invalidParameter(name:reason:)``.
    public static func items(from query: WireQuery) throws(VisualSearchError) -> [InsertItem] {
        var rows: [Int: [String: String]] = [:]
        for item in query.items {
            guard item.name.hasSuffix("]"), let open = item.name.lastIndex(of: "["),
                  let index = Int(item.name[item.name.index(after: open)..<item.name.index(before: item.name.endIndex)]) else { continue }
            guard (0..<100_000).contains(index) else { throw .invalidParameter(name: item.name, reason: "index out of range 0...99999") }
            rows[index, default: [:]][String(item.name[..<open])] = item.value
        }
        guard !rows.isEmpty else { throw .invalidParameter(name: "im_name[0]", reason: "no images given (im_name[i] and im_url[i])") }
        return try rows.keys.sorted().map { (index) throws(VisualSearchError) -> InsertItem in
            var row = rows[index] ?? [:]
            guard let name = row.removeValue(forKey: "im_name"), !name.isEmpty else {
                throw .invalidParameter(name: "im_name[\(index)]", reason: "missing")
            }
            guard let url = row.removeValue(forKey: "im_url"), !url.isEmpty else {
                throw .invalidParameter(name: "im_url[\(index)]", reason: "missing for \(name)")
            }
            return InsertItem(imageName: name, imageURL: url, metadata: row)
        }
    }
}

/// A per-image error of the data API: `{im_name, index, error_code, error_message}`.
public struct DataAPIError: Sendable, Hashable, Codable {
    public var imageName: String?
    public var index: Int?
    public var code: Int?
    public var message: String

    enum CodingKeys: String, CodingKey {
        case imageName = "im_name", index, code = "error_code", message = "error_message"
    }

    public init(imageName: String?, index: Int?, code: Int?, message: String) {
        self.imageName = imageName
        self.index = index
        self.code = code
        self.message = message
    }

    /// Accepts the object form and a bare string (the search APIs' form).
    public init(from decoder: any Decoder) throws {
        if let text = try? decoder.singleValueContainer().decode(String.self) {
            self.init(imageName: nil, index: nil, code: nil, message: text)
            return
        }
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(imageName: try container.decodeIfPresent(String.self, forKey: .imageName),
                  index: try container.decodeIfPresent(Int.self, forKey: .index),
                  code: try container.decodeIfPresent(Int.self, forKey: .code),
                  message: try container.decodeIfPresent(String.self, forKey: .message) ?? "unknown error")
    }
}

/// `/insert` and `/remove` answers: `{status, method, trans_id?, total, error:[…]}`.
public struct DataAPIResponse: Sendable, Hashable, Codable {
    public var status: SearchResponse.Status
    public var method: String
    /// The insert's transaction id, to poll with `/insert/status/{trans_id}`.
    public var transactionID: String?
    /// Images accepted (insert) or removed (remove).
    public var total: Int
    public var error: [DataAPIError]

    enum CodingKeys: String, CodingKey {
        case status, method, transactionID = "trans_id", total, error
    }

    public init(status: SearchResponse.Status, method: String, transactionID: String? = nil, total: Int, error: [DataAPIError] = []) {
        self.status = status
        self.method = method
        self.transactionID = transactionID
        self.total = total
        self.error = error
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        status = try container.decode(SearchResponse.Status.self, forKey: .status)
        method = try container.decodeIfPresent(String.self, forKey: .method) ?? ""
        // The hosted service sends trans_id as a (large) number; keep it as text.
        transactionID = try container.decodeIdentifierIfPresent(forKey: .transactionID)
        total = try container.decodeIfPresent(Int.self, forKey: .total) ?? 0
        error = try container.decodeIfPresent([DataAPIError].self, forKey: .error) ?? []
    }
}

/// `/insert/status/{trans_id}`: `{status, method, result:[{trans_id, processed_percent, …}]}`.
public struct InsertStatusResponse: Sendable, Hashable, Codable {
    /// The progress of one insert transaction.
    public struct Progress: Sendable, Hashable, Codable {
        public var transactionID: String
        /// 0...100.
        public var processedPercent: Int
        public var total: Int
        public var successCount: Int
        public var failCount: Int
        public var startTime: String?
        public var updateTime: String?
        public var errorList: [DataAPIError]

        enum CodingKeys: String, CodingKey {
            case transactionID = "trans_id", processedPercent = "processed_percent", total
            case successCount = "success_count", failCount = "fail_count", startTime = "start_time"
            case updateTime = "update_time", errorList = "error_list"
        }

        public init(transactionID: String, processedPercent: Int, total: Int, successCount: Int, failCount: Int,
                    startTime: String?, updateTime: String?, errorList: [DataAPIError]) {
            self.transactionID = transactionID
            self.processedPercent = processedPercent
            self.total = total
            self.successCount = successCount
            self.failCount = failCount
            self.startTime = startTime
            self.updateTime = updateTime
            self.errorList = errorList
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            transactionID = try container.decodeIdentifierIfPresent(forKey: .transactionID) ?? ""
            processedPercent = try container.decodeIfPresent(Int.self, forKey: .processedPercent) ?? 0
            total = try container.decodeIfPresent(Int.self, forKey: .total) ?? 0
            successCount = try container.decodeIfPresent(Int.self, forKey: .successCount) ?? 0
            failCount = try container.decodeIfPresent(Int.self, forKey: .failCount) ?? 0
            startTime = try container.decodeIfPresent(String.self, forKey: .startTime)
            updateTime = try container.decodeIfPresent(String.self, forKey: .updateTime)
            errorList = try container.decodeIfPresent([DataAPIError].self, forKey: .errorList) ?? []
        }

        /// Whether every image has been processed.
        public var isFinished: Bool { processedPercent >= 100 }
    }

    public var status: SearchResponse.Status
    public var method: String
    public var result: [Progress]
    public var error: [String]

    public init(status: SearchResponse.Status = .ok, method: String = "insert/status", result: [Progress], error: [String] = []) {
        self.status = status
        self.method = method
        self.result = result
        self.error = error
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        status = try container.decode(SearchResponse.Status.self, forKey: .status)
        method = try container.decodeIfPresent(String.self, forKey: .method) ?? ""
        result = try container.decodeIfPresent([Progress].self, forKey: .result) ?? []
        error = (try? container.decodeIfPresent([String].self, forKey: .error)) ?? []
    }
}

extension KeyedDecodingContainer {
    /// An id sent as a string or as a (possibly 64-bit) integer, kept exactly as text.
    func decodeIdentifierIfPresent(forKey key: Key) throws -> String? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        if let text = try? decode(String.self, forKey: key) { return text }
        if let number = try? decode(UInt64.self, forKey: key) { return String(number) }
        if let number = try? decode(Int64.self, forKey: key) { return String(number) }
        return try decode(JSONValue.self, forKey: key).stringValue
    }
}
