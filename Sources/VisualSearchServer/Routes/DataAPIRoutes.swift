import Foundation
import Hummingbird
import VisualSearch

/// The data API: `/insert` (asynchronous, with a transaction id),
/// `/insert/status/{trans_id}` and `/remove`; items as indexed fields
/// `im_name[i]`, `im_url[i]`, `field[i]` in the query string or a form body.
struct DataAPIRoutes: Sendable {
    let catalog: Catalog
    let jobs: InsertJobs
    let endpoint: Endpoint

    func register(on router: Router<ServerContext>) {
        router.post("insert") { request, context in
            await endpoint.run(request, context: context, family: .viSearch, method: "insert") { parameters throws(ServerError) in
                let items = try ViSearchRoutes.engineCall { () throws(VisualSearchError) in try InsertItem.items(from: parameters.query) }
                return DataAPIResponse(status: .ok, method: "insert", transactionID: jobs.start(items), total: items.count)
            }
        }
        router.get("insert/status/:trans_id") { request, context in
            let id = context.parameters.get("trans_id") ?? ""
            return await endpoint.run(request, context: context, family: .viSearch, method: "insert/status") { _ throws(ServerError) in
                guard let progress = jobs.status(id) else {
                    throw .engine(.invalidParameter(name: "trans_id", reason: "no insert transaction \(id) on this server"))
                }
                return InsertStatusResponse(result: [progress])
            }
        }
        router.post("remove") { request, context in
            await endpoint.run(request, context: context, family: .viSearch, method: "remove") { parameters throws(ServerError) in
                let names = parameters.query.items.filter { $0.name == "im_name" || $0.name.hasPrefix("im_name[") }.map(\.value).filter { !$0.isEmpty }
                guard !names.isEmpty else { throw .engine(.invalidParameter(name: "im_name[0]", reason: "no images given")) }
                let removed = try ViSearchRoutes.engineCall { () throws(VisualSearchError) in try catalog.remove(names) }
                return DataAPIResponse(status: .ok, method: "remove", total: removed)
            }
        }
    }
}
