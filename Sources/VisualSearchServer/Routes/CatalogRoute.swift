import Hummingbird
import SearchEngine
import VisualSearch

/// `GET /catalog?page=P&limit=L`: what a catalog holds — its image count,
/// its declared fields with their types, and a page of image names in name
/// order — for the web page's catalog browser and its facets. Not part of
/// the hosted API; keys as for search.
public struct CatalogRoute: Sendable {
    public let store: any CatalogReader
    let endpoint: EndpointFrame

    public init(store: any CatalogReader, settings: EndpointSettings) {
        self.store = store
        endpoint = EndpointFrame(settings: settings)
    }

    struct Body: Encodable, Sendable {
        struct Field: Encodable, Sendable {
            var name: String
            var type: String
        }
        struct Item: Encodable, Sendable {
            var imageName: String
            enum CodingKeys: String, CodingKey { case imageName = "im_name" }
        }
        var status = "OK"
        var method = "catalog"
        var images: Int
        var fields: [Field]
        var page: Int
        var limit: Int
        var result: [Item]
        var reqid: String
    }

    /// Adds `GET /catalog` to `router`.
    public func register<Context: VisualSearchRequestContext>(on router: Router<Context>) {
        router.get("catalog") { request, context in
            let requestID = context.requestID
            return await endpoint.run(request, context: context, family: .viSearch, method: "catalog") { parameters throws(ServerError) in
                let page = try Self.integer(parameters.query.first("page"), name: "page", default: 1, range: 1...1_000_000)
                let limit = try Self.integer(parameters.query.first("limit"), name: "limit", default: 24, range: 1...1000)
                do throws(CatalogStoreError) {
                    let schema = try await store.schema()
                    return Body(images: try await store.count(),
                                fields: schema.fields.keys.sorted().map { Body.Field(name: $0, type: schema.fields[$0]!.rawValue) },
                                page: page, limit: limit,
                                result: try await store.imageNames(offset: (page - 1) * limit, limit: limit).map(Body.Item.init),
                                reqid: requestID)
                } catch {
                    throw error.served
                }
            }
        }
    }

    static func integer(_ text: String?, name: String, default value: Int, range: ClosedRange<Int>) throws(ServerError) -> Int {
        guard let text else { return value }
        guard let number = Int(text), range.contains(number) else {
            throw .engine(.invalidParameter(name: name, reason: "\(text) is not a whole number in \(range.lowerBound)...\(range.upperBound)"))
        }
        return number
    }
}
