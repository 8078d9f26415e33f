import Foundation
import VisualSearch

/// What one search may ask the server to compute, whoever asks: results a
/// page, how deep it may page, objects a discover search describes. Past
/// one, the request is refused with 400 naming the parameter, its value and
/// the server's maximum — never clamped, so a client is not handed fewer
/// results than it asked for without being told (the hosted service
/// documents `limit` at most 100: docs/wire-protocol.md §1.7).
///
/// The cost of a search grows with its results: ranking keeps `page × limit`
/// of them (three times as many with dedup, which `/recommendations` always
/// uses, and dedup compares each with those kept before it), a PostgreSQL
/// catalog fetches as many vectors, and each discover object decodes a
/// region and runs a whole search. Each is a `vsearch serve` flag.
public struct QueryLimits: Sendable, Hashable {
    /// Results a page may ask for (`limit`, discover's `result_limit`): 100 by default, the hosted service's documented maximum.
    public var maxResultLimit: Int
    /// How deep a request may page: `page × limit` at most, 1,000 results by default (ten pages of 100).
    public var maxResultDepth: Int
    /// Objects — a `box` and each `point` — one `/discoversearch` may name: 30 by default (`detection_limit`'s documented range is 1–30).
    public var maxDiscoverObjects: Int

    /// Limits with the documented defaults.
    public init(maxResultLimit: Int = 100, maxResultDepth: Int = 1000, maxDiscoverObjects: Int = 30) {
        self.maxResultLimit = max(1, maxResultLimit)
        self.maxResultDepth = max(1, maxResultDepth)
        self.maxDiscoverObjects = max(1, maxDiscoverObjects)
    }

    /// Refuses a request that asks for more than these limits allow; any other request passes.
    /// - Throws: ``ServerError/engine(_:)`` with ``VisualSearchError/invalidParameter(name:reason:)``
    ///   naming `limit` (or `result_limit`), `page` or `point`.
    func check(_ request: some WireRequest) throws(ServerError) {
        guard let asked = request as? any ResultCosting else { return }
        let limit = asked.resultParameters.limit, page = asked.resultParameters.page
        let limitName = (asked as? DiscoverSearchRequest)?.resultLimit != nil ? "result_limit" : "limit"
        if limit > maxResultLimit {
            throw .engine(.invalidParameter(name: limitName, reason: "\(limitName) \(limit) is over this server's maximum \(maxResultLimit)"))
        }
        let (depth, overflow) = max(1, page).multipliedReportingOverflow(by: max(1, limit))
        if overflow || depth > maxResultDepth {
            throw .engine(.invalidParameter(name: "page", reason: "page \(page) of \(limit) results reaches result "
                                            + "\(overflow ? "beyond \(Int.max)" : String(depth)), deeper than this server's maximum \(maxResultDepth)"))
        }
        let objects = asked.objectCount
        if objects > maxDiscoverObjects {
            throw .engine(.invalidParameter(name: "point", reason: "\(objects) points and boxes are over this server's maximum "
                                            + "\(maxDiscoverObjects) objects per discover search"))
        }
    }
}

/// A request whose cost its client chooses: the page it asks for and, for
/// `/discoversearch`, how many objects are each searched.
protocol ResultCosting {
    /// The parameters the results are ranked and paged with.
    var resultParameters: SearchParameters { get }
    /// Objects searched one by one (1 for every search but discover's).
    var objectCount: Int { get }
}

extension ResultCosting {
    var objectCount: Int { 1 }
}

extension SearchRequest: ResultCosting { var resultParameters: SearchParameters { parameters } }
extension RecommendationsRequest: ResultCosting { var resultParameters: SearchParameters { parameters } }
extension UploadSearchRequest: ResultCosting { var resultParameters: SearchParameters { parameters } }
extension ColorSearchRequest: ResultCosting { var resultParameters: SearchParameters { parameters } }
extension ProductSearchRequest: ResultCosting { var resultParameters: SearchParameters { parameters } }
extension ProductRecommendationsRequest: ResultCosting { var resultParameters: SearchParameters { parameters } }

extension DiscoverSearchRequest: ResultCosting {
    var resultParameters: SearchParameters { effectiveParameters }
    var objectCount: Int { points.count + (query.box == nil ? 0 : 1) }
}
