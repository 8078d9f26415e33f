import Foundation
import ImageOps

/// ViSearch `/discoversearch`: results per object of an image. Objects are
/// what a detector finds — or, offline, the whole image, the `box` and each
/// `point` given.
public struct DiscoverSearchRequest: WireRequest {
    public typealias Response = SearchResponse
    public var query: ImageQuery
    /// Points of interest (`point=x,y`, repeatable), in the image's upright pixels.
    public var points: [PixelPoint]
    /// Results per object (`result_limit`); overrides `parameters.limit`.
    public var resultLimit: Int?
    /// Objects at most (`detection_limit`).
    public var detectionLimit: Int?
    public var parameters: SearchParameters

    public init(_ query: ImageQuery, points: [PixelPoint] = [], resultLimit: Int? = nil, detectionLimit: Int? = nil,
                parameters: SearchParameters = SearchParameters()) {
        self.query = query
        self.points = points
        self.resultLimit = resultLimit
        self.detectionLimit = detectionLimit
        self.parameters = parameters
    }

    public static let endpoint = WireEndpoint(family: .viSearch, method: "discoversearch", paths: ["discoversearch"], body: .multipartImage)

    /// The parameters every object is searched with: `result_limit` as the limit.
    public var effectiveParameters: SearchParameters {
        var parameters = self.parameters
        if let resultLimit { parameters.limit = resultLimit }
        return parameters
    }

    /// The request with its image prepared and its points scaled like its box.
    /// - Throws: ``ImageOpsError``.
    public func prepared(limits: ImageLimits = .default, scale told: ((Double) -> Void)? = nil) throws(ImageOpsError) -> DiscoverSearchRequest {
        var scale = 1.0
        var copy = self
        copy.query = try query.prepared(limits: limits) { scale = $0 }
        told?(scale)
        copy.points = points.map { PixelPoint(x: Self.scaled($0.x, by: scale), y: Self.scaled($0.y, by: scale)) }
        return copy
    }

    /// A coordinate times `scale`, truncated toward zero like a box; a result beyond `Int`
    /// saturates (`Double(Int.max)` is 2⁶³, one past `Int.max`, even at scale 1).
    static func scaled(_ coordinate: Int, by scale: Double) -> Int {
        let product = (Double(coordinate) * scale).rounded(.towardZero)
        return Int(exactly: product) ?? (product > 0 ? .max : .min)
    }

    public func wireMessage() throws(VisualSearchError) -> WireMessage {
        var message = WireMessage(query: parameters.wireQuery(for: .viSearch))
        if let resultLimit { message.query.append("result_limit", String(resultLimit)) }
        if let detectionLimit { message.query.append("detection_limit", String(detectionLimit)) }
        message.query.append("point", values: points.map(\.description))
        try query.encode(into: &message)
        return message
    }

    /// The most objects one discover search reports (`detection_limit`'s documented range is 1–30).
    public static let maximumDetectionLimit = 30

    public init(wire: WireMessage) throws(VisualSearchError) {
        let points = try wire.query.pairs("point").map { (text) throws(VisualSearchError) in try PixelPoint(parsing: text) }
        self.init(try ImageQuery(wire: wire), points: points, resultLimit: try wire.query.int("result_limit"),
                  detectionLimit: try wire.query.int("detection_limit"),
                  parameters: try SearchParameters(wire: wire.query, dialect: .viSearch))
        try effectiveParameters.validate()
        if let detectionLimit, !(1...Self.maximumDetectionLimit).contains(detectionLimit) {
            throw .invalidParameter(name: "detection_limit", reason: "\(detectionLimit) is not in 1...\(Self.maximumDetectionLimit) (the hosted service's range)")
        }
    }
}

/// A point `x,y` in an image's upright pixels.
public struct PixelPoint: Sendable, Hashable, Codable, CustomStringConvertible {
    public var x: Int
    public var y: Int

    public init(x: Int, y: Int) {
        self.x = x
        self.y = y
    }

    /// Parses `x,y`.
    /// - Throws: ``VisualSearchError/invalidParameter(name:reason:)`` naming `point`.
    public init(parsing text: String) throws(VisualSearchError) {
        // Spaces and tabs around each number (no Foundation: a request may carry many points).
        func trimmed(_ part: Substring) -> Substring {
            var part = part
            while let first = part.first, first == " " || first == "\t" { part.removeFirst() }
            while let last = part.last, last == " " || last == "\t" { part.removeLast() }
            return part
        }
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { Int(trimmed($0)) }
        guard parts.count == 2, let x = parts[0], let y = parts[1], x >= 0, y >= 0 else {
            throw .invalidParameter(name: "point", reason: "\"\(text)\" is not x,y with non-negative integers")
        }
        self.init(x: x, y: y)
    }

    /// The zero-size box the ViSearch guide reads as this point.
    public var box: PixelBox { PixelBox(x1: x, y1: y, x2: x, y2: y) }

    /// `x,y`.
    public var description: String { "\(x),\(y)" }
}
