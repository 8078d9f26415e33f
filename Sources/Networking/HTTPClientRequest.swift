import Foundation

/// One HTTP request as ``HTTPTransport`` sends it: method, URL, ordered
/// header fields, an optional body and an idle timeout.
///
/// ```swift
/// var request = HTTPClientRequest(url: URL(string: "https://example.com/search?q=1")!)
/// request.headers.append(("Accept", "application/json"))
/// request.timeout = 30
/// ```
public struct HTTPClientRequest: Sendable, Hashable {
    /// The method, e.g. `GET` or `POST`. `GET` by default.
    public var method: String
    /// Where the request goes: an `http` or `https` URL.
    public var url: URL
    /// Header fields in the order they are sent; a name may repeat. None by default.
    public var headers: [(name: String, value: String)]
    /// The body, sent as is. None by default.
    public var body: [UInt8]?
    /// Seconds without progress (no connection, no byte received) before the
    /// request fails with ``HTTPClientError/timeout(url:seconds:)``. An idle
    /// timeout, not a deadline: a slow but steady download goes on. 10 by default.
    public var timeout: Double

    /// A request; everything but the URL has a default.
    /// - Parameters:
    ///   - method: `GET` by default.
    ///   - url: the destination.
    ///   - headers: header fields in order, none by default.
    ///   - body: the body, none by default.
    ///   - timeout: idle seconds, 10 by default.
    public init(method: String = "GET", url: URL, headers: [(name: String, value: String)] = [], body: [UInt8]? = nil, timeout: Double = 10) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }

    /// The first value of a header field, its name compared case-insensitively.
    /// - Returns: the value, or nil when the request has no such field.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// Equal when method, URL, headers (names and values, in order), body and timeout are.
    public static func == (lhs: HTTPClientRequest, rhs: HTTPClientRequest) -> Bool {
        lhs.method == rhs.method && lhs.url == rhs.url && lhs.body == rhs.body && lhs.timeout == rhs.timeout
            && lhs.headers.map(\.name) == rhs.headers.map(\.name) && lhs.headers.map(\.value) == rhs.headers.map(\.value)
    }

    /// Hashes what ``==(_:_:)`` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(method)
        hasher.combine(url)
        for header in headers {
            hasher.combine(header.name)
            hasher.combine(header.value)
        }
        hasher.combine(body)
        hasher.combine(timeout)
    }
}
