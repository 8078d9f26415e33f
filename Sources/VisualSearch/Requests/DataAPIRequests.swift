/// Data API `/insert`: adds or replaces images by `im_name`. Indexing runs
/// asynchronously; the answer's `trans_id` is polled with ``InsertStatusRequest``.
/// Never retried once it may have reached the server.
public struct InsertRequest: WireRequest {
    public typealias Response = DataAPIResponse
    public var items: [InsertItem]

    public init(items: [InsertItem]) {
        self.items = items
    }

    public static let endpoint = WireEndpoint(family: .viSearch, method: "insert", paths: ["insert"], body: .form, isIdempotent: false)

    public func wireMessage() throws(VisualSearchError) -> WireMessage {
        guard !items.isEmpty else { throw .invalidParameter(name: "im_name[0]", reason: "insert needs at least one image") }
        return WireMessage(query: InsertItem.wireQuery(items))
    }

    public init(wire: WireMessage) throws(VisualSearchError) {
        self.init(items: try InsertItem.items(from: wire.query))
    }
}

/// Data API `/insert/status/{trans_id}`.
public struct InsertStatusRequest: WireRequest {
    public typealias Response = InsertStatusResponse
    public var transactionID: String

    public init(transactionID: String) {
        self.transactionID = transactionID
    }

    public static let endpoint = WireEndpoint(family: .viSearch, method: "insert/status", paths: ["insert/status/{id}"], body: .none)

    public func wireMessage() throws(VisualSearchError) -> WireMessage {
        try InsertStatusRequest.check(transactionID)
        return WireMessage(pathParameter: transactionID)
    }

    public init(wire: WireMessage) throws(VisualSearchError) {
        let id = wire.pathParameter ?? ""
        try InsertStatusRequest.check(id)
        self.init(transactionID: id)
    }

    static func check(_ id: String) throws(VisualSearchError) {
        guard !id.isEmpty, id.count <= 64, id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) else {
            throw .invalidParameter(name: "trans_id", reason: "\"\(id.prefix(64))\" is not a transaction id")
        }
    }
}

/// Data API `/remove`: removes images by `im_name` (`im_name[i]` on the wire).
public struct RemoveRequest: WireRequest {
    public typealias Response = DataAPIResponse
    public var imageNames: [String]

    public init(imageNames: [String]) {
        self.imageNames = imageNames
    }

    public static let endpoint = WireEndpoint(family: .viSearch, method: "remove", paths: ["remove"], body: .form)

    public func wireMessage() throws(VisualSearchError) -> WireMessage {
        guard !imageNames.isEmpty else { throw .invalidParameter(name: "im_name[0]", reason: "remove needs at least one im_name") }
        var query = WireQuery()
        for (index, name) in imageNames.enumerated() { query.append("im_name[\(index)]", name) }
        return WireMessage(query: query)
    }

    public init(wire: WireMessage) throws(VisualSearchError) {
        let names = wire.query.items.filter { $0.name == "im_name" || $0.name.hasPrefix("im_name[") }.map(\.value).filter { !$0.isEmpty }
        guard !names.isEmpty else { throw .invalidParameter(name: "im_name[0]", reason: "no images given") }
        self.init(imageNames: names)
    }
}
