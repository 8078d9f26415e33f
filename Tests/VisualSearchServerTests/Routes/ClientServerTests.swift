import Foundation
import ImageOps
import Testing
@testable import VisualSearch
@testable import VisualSearchServer

/// The typed client against a real server on loopback: every endpoint, and
/// filters, paging, facets and scores behave exactly as the engine's.
@Suite("Client ⇄ server over loopback")
struct ClientServerTests {
    func parameters(_ configure: (inout SearchParameters) -> Void = { _ in }) -> SearchParameters {
        var parameters = SearchParameters()
        parameters.includesScore = true
        configure(&parameters)
        return parameters
    }

    /// The same answer as the engine's, but for the request id.
    func same(_ remote: SearchResponse, _ local: SearchResponse) {
        var remote = remote, local = local
        remote.requestID = nil
        local.requestID = nil
        #expect(remote == local)
    }

    @Test("/search: filters, paging, facets, fl and scores as in the engine")
    func search() async throws {
        let (url, server) = await TestServer.shared.get()
        let client = TestServer.client(url)
        let cases: [SearchParameters] = [
            parameters(),
            parameters { $0.limit = 5; $0.page = 3 },
            parameters { $0.filters = [Filter(field: "category", value: "food")]; $0.fields = ["brand", "price"] },
            parameters { $0.filters = [Filter(field: "price", value: "10,100")]; $0.facets = ["category", "price"]; $0.facetsShowCount = true },
            parameters { $0.scoreMin = 0.8; $0.returnsAllFields = true; $0.deduplicates = true },
        ]
        for parameters in cases {
            let remote = try await client.search(imageName: "chelsea_cat", parameters: parameters)
            same(remote, try server.engine.search(imageName: "chelsea_cat", parameters: parameters))
            #expect(remote.requestID?.count == 19)
        }
    }

    @Test("/recommendations and the singular /recommendation")
    func recommendations() async throws {
        let (url, server) = await TestServer.shared.get()
        let remote = try await TestServer.client(url).recommendations(imageName: "coffee_cup", parameters: parameters { $0.limit = 4 })
        same(remote, try server.engine.recommendations(imageName: "coffee_cup", parameters: parameters { $0.limit = 4 }))
        let singular = try await TestServer.raw(URL(string: "\(url)/recommendation?im_name=coffee_cup&limit=4")!)
        #expect(singular.status == 200 && (singular.json["result"] as? [Any])?.count == 4)
    }

    @Test("/colorsearch, with and without #")
    func color() async throws {
        let (url, server) = await TestServer.shared.get()
        let remote = try await TestServer.client(url).colorSearch("#C45B3B", parameters: parameters { $0.limit = 3 })
        same(remote, try server.engine.colorSearch("c45b3b", parameters: parameters { $0.limit = 3 }))
    }

    @Test("/uploadsearch: prepared bytes with a scaled box; then the returned im_id; then im_url of a local file")
    func upload() async throws {
        let (url, server) = await TestServer.shared.get()
        let client = TestServer.client(url)
        let bytes = TestServer.bytes("astronaut.jpg")
        let box = PixelBox(x1: 100, y1: 50, x2: 400, y2: 450)
        let remote = try await client.uploadSearch(.bytes(bytes), box: box, parameters: parameters { $0.limit = 5 })
        #expect(remote.result.first?.imageName == "astronaut")
        // The server saw exactly what the client prepared: the engine on that upload agrees.
        let prepared = try UploadPreparation.prepare(bytes, source: "t", box: box)
        same(remote, try server.engine.uploadSearch(.bytes(prepared.jpeg), box: prepared.box, parameters: parameters { $0.limit = 5 }).withoutImageID(remote.imageID))
        let imageID = try #require(remote.imageID)
        let again = try await client.uploadSearch(.imageID(imageID), parameters: parameters { $0.limit = 5 })
        #expect(again.result.first?.imageName == "astronaut" && again.imageID == imageID)
        let byURL = try await client.uploadSearch(.url(TestServer.images + "/coffee_cup.jpg"), parameters: parameters { $0.limit = 1 })
        #expect(byURL.result.first?.imageName == "coffee_cup")
    }

    @Test("/discoversearch: one object for the whole image, with its own results")
    func discover() async throws {
        let (url, _) = await TestServer.shared.get()
        let response = try await TestServer.client(url).discoverSearch(.file(TestServer.images + "/chelsea_cat.jpg"), parameters: parameters(), resultLimit: 3)
        #expect(response.objects?.count == 1 && response.objects?.first?.result.count == 3)
        #expect(response.objects?.first?.result.first?.imageName == "chelsea_cat")
    }

    @Test("ProductSearch: search_by_image and recommendations/{product_id}")
    func productSearch() async throws {
        let (url, server) = await TestServer.shared.get()
        let client = ProductSearchClient(configuration: ProductSearchConfiguration(baseURL: url, appKey: "any", placementID: 7, retry: .none))
        let found = try await client.searchByImage(.file(TestServer.images + "/grace_hopper.jpg"), parameters: parameters { $0.fields = ["brand"]; $0.limit = 3 })
        #expect(found.method == "product/search_by_image" && found.result?.first?.productID == "grace_hopper")
        #expect(found.result?.first?.data?["brand"] == .string("matplotlib"))
        let recs = try await client.recommendations(productID: "grace_hopper", parameters: parameters { $0.limit = 3 })
        var local = try server.engine.productRecommendations(productID: "grace_hopper", parameters: parameters { $0.limit = 3; $0.returnsAllFields = true })  // ProductSearch returns all fields unless attrs_to_get says otherwise
        local.requestID = recs.requestID
        #expect(recs == local)
        do {
            _ = try await client.recommendations(productID: "no_such", parameters: parameters())
            Issue.record("expected a failure")
        } catch {
            guard case .http(404, _, let message) = error else { Issue.record("\(error)"); return }
            #expect(message == "Image not found with im_name.")
        }
    }

    @Test("data API: insert runs asynchronously, status reports it, search finds it, remove takes it out")
    func dataAPI() async throws {
        let (url, _) = await TestServer.start()
        let client = TestServer.client(url)
        let items = [InsertItem(imageName: "new_cat", imageURL: TestServer.images + "/chelsea_cat.jpg", metadata: ["brand": "acme", "shelf": "7"]),
                     InsertItem(imageName: "broken", imageURL: TestServer.badInput + "/truncated/" + ((try? FileManager.default.contentsOfDirectory(atPath: TestServer.badInput + "/truncated"))?.sorted().first ?? "x")),
                     InsertItem(imageName: "far", imageURL: "https://example.com/a.jpg")]
        let inserted = try await client.insert(items)
        #expect(inserted.status == .ok && inserted.total == 3)
        let id = try #require(inserted.transactionID)
        var progress = try await client.insertStatus(transactionID: id).result.first
        for _ in 0..<100 where progress?.isFinished != true {
            try await Task.sleep(nanoseconds: 50_000_000)
            progress = try await client.insertStatus(transactionID: id).result.first
        }
        #expect(progress?.isFinished == true && progress?.successCount == 1 && progress?.failCount == 2)
        #expect(progress?.errorList.map(\.imageName) == ["broken", "far"])
        let found = try await client.search(imageName: "new_cat", parameters: parameters { $0.filters = [Filter(field: "shelf", value: "7")]; $0.fields = ["brand"] })
        #expect(found.result.map(\.imageName) == ["new_cat"] && found.result.first?.valueMap == ["brand": "acme"])
        let removed = try await client.remove(["new_cat"])
        #expect(removed.total == 1)
        await #expect(throws: ClientError.self) { try await client.search(imageName: "new_cat", parameters: parameters()) }
        await #expect(throws: ClientError.self) { try await client.insertStatus(transactionID: "123") }
    }
}

extension SearchResponse {
    func withoutImageID(_ id: String?) -> SearchResponse {
        var copy = self
        copy.imageID = id
        return copy
    }
}
