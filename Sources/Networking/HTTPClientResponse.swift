import Foundation

/// One HTTP answer, whatever its status: the caller decides what a 4xx means.
public struct HTTPClientResponse: Sendable, Hashable {
    /// The status code, e.g. 200.
    public var status: Int
    /// Header fields, names lower-cased (`content-type`, `retry-after`).
    public var headers: [String: String]
    /// The whole body, at most the transport's size cap.
    public var body: [UInt8]
    /// The URL that answered: the request's, or the last redirect's target. Nil when unknown.
    public var url: URL?

    /// A response; header names are lower-cased (the first of two names differing only in case wins).
    /// - Parameters:
    ///   - status: the status code.
    ///   - headers: header fields, none by default.
    ///   - body: the body, empty by default.
    ///   - url: the URL that answered, nil by default.
    public init(status: Int, headers: [String: String] = [:], body: [UInt8] = [], url: URL? = nil) {
        self.status = status
        var lowered: [String: String] = [:]
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) where lowered[name.lowercased()] == nil {
            lowered[name.lowercased()] = value
        }
        self.headers = lowered
        self.body = body
        self.url = url
    }
}
