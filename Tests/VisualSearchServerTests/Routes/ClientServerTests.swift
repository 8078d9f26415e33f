import Foundation
import ImageOps
import Networking
import TestSupport
import Testing
import VisualSearch
@testable import VisualSearchServer

/// The typed client against a real server on loopback, where the socket is
/// the point: credentials as the client sends them, ProductSearch settings,
/// the server's errors as the client reports them, and the data API's
/// asynchronous inserts. (That every endpoint answers exactly as the engine
/// does is ``ParityTests``.)
@Suite("Client ⇄ server over loopback", .timeLimit(.minutes(10)))
struct ClientServerTests {
    @Test("an app key (access_key) and an access key with its secret (Basic) reach a server with keys; a wrong key is a 401 saying so")
    func credentials() async throws {
        let keys = try ServerCredentials(lines: "app-1\nACCESS:SECRET")
        try await ServerFixture.with({ $0.credentials = keys }) { running in
            let request = SearchRequest(imageName: "chelsea_cat", parameters: Corpus.parameters { $0.limit = 2 })
            let viaAppKey = try await ServerFixture.client(running.url, credentials: .appKey("app-1")).search(request)
            #expect(viaAppKey.status == .ok && viaAppKey.result.count == 2)
            let viaBasic = try await ServerFixture.client(running.url, credentials: .accessKey("ACCESS", secret: "SECRET")).search(request)
            #expect(viaBasic.result == viaAppKey.result)
            for credentials: ClientConfiguration.Credentials in [.appKey("nope"), .accessKey("ACCESS", secret: "WRONG"), .none] {
                do {
                    _ = try await ServerFixture.client(running.url, credentials: credentials).search(request)
                    Issue.record("\(credentials): expected a 401")
                } catch {
                    guard case .http(401, _, let message?)? = error as? ClientError else {
                        Issue.record("\(credentials): expected a 401 with a message, got \(error)")
                        continue
                    }
                    #expect(!message.isEmpty && String(describing: error).contains("check the app key"), "\(error)")
                }
            }
        }
    }

    @Test("ProductSearch with its own app key and placement: search_by_image and recommendations; an unknown product is a 404 with the service's message")
    func productSearch() async throws {
        try await ServerFixture.with({ $0.credentials = ServerCredentials(appKeys: ["product-key"]) }) { running in
            let client = ViSearchClient(configuration: ClientConfiguration(
                baseURL: running.url, credentials: .appKey("not-for-products"),
                productSearch: ProductSearchConfiguration(baseURL: running.url, appKey: "product-key", placementID: 7),
                timeout: 60, retry: .none))  // ServerFixture.client's timeout: an answer, not its speed (it took over 10 s under both sanitizers)
            let found = try await client.productSearch(ProductSearchRequest(ImageQuery(.file(Repository.images + "/grace_hopper.jpg")),
                                                                             parameters: Corpus.parameters { $0.fields = ["brand"]; $0.limit = 3 }))
            #expect(found.method == "product/search_by_image" && found.result?.first?.productID == "grace_hopper")
            #expect(found.result?.first?.data == ["brand": .string("matplotlib")])
            #expect(found.requestID?.count == 19 && found.imageID?.hasSuffix(".jpg") == true)
            let recommended = try await client.productRecommendations(ProductRecommendationsRequest(productID: "grace_hopper",
                                                                                                    parameters: Corpus.parameters { $0.limit = 3 }))
            #expect(recommended.result?.count == 3 && recommended.productInfo?.productID == "grace_hopper")
            #expect(recommended.result?.contains { $0.productID == "grace_hopper" } == false)
            do {
                _ = try await client.productRecommendations(ProductRecommendationsRequest(productID: "no_such"))
                Issue.record("expected a 404")
            } catch {
                #expect(error as? ClientError == .http(status: 404, url: running.url.absoluteString + "/v1/product/recommendations/no_such?app_key=***&limit=10&page=1&placement_id=7",
                                       message: "Image not found with im_name."))
            }
            // ViSearch calls go with the ViSearch key, which this server does not know.
            await #expect(throws: ClientError.self) { try await client.search(SearchRequest(imageName: "grace_hopper")) }
        }
    }

    @Test("a request the server refuses: the HTTP status with the server's message, sent once")
    func refusals() async throws {
        try await ServerFixture.with { running in
            let client = ViSearchClient(configuration: ClientConfiguration(baseURL: running.url, credentials: .none, timeout: 60))  // default retries
            let cases: [(SearchRequest, Int, String)] = [
                (SearchRequest(imageName: "chelsea_cat", parameters: Corpus.parameters { $0.page = 0 }), 400, "Invalid parameter page"),
                (SearchRequest(imageName: "chelsea_cat", parameters: Corpus.parameters { $0.filters = [Filter(field: "nope", value: "1")] }), 400,
                 "Unknown field nope"),
                (SearchRequest(imageName: "nothing_here"), 404, "Image not found with im_name."),
            ]
            for (request, status, message) in cases {
                do {
                    _ = try await client.search(request)
                    Issue.record("expected HTTP \(status)")
                } catch {
                    guard case .http(let got, _, let text?)? = error as? ClientError else {
                        Issue.record("expected HTTP \(status), got \(error)")
                        continue
                    }
                    #expect(got == status && text.hasPrefix(message), "\(error)")
                }
            }
        }
    }

    @Test("data API: insert runs asynchronously, status reports each failure, search finds the new image, remove takes it out")
    func dataAPI() async throws {
        let truncated = Repository.badInput + "/truncated/trunc_50pct.jpg"
        try await ServerFixture.with({ $0.imageRoots = [Repository.images, Repository.badInput] }) { running in
            let client = ServerFixture.client(running.url)
            let items = [InsertItem(imageName: "new_cat", imageURL: "file://" + Repository.images + "/chelsea_cat.jpg", metadata: ["brand": "acme", "shelf": "7"]),
                         InsertItem(imageName: "broken", imageURL: truncated),
                         InsertItem(imageName: "far", imageURL: "https://example.com/a.jpg")]
            let inserted = try await client.insert(InsertRequest(items: items))
            #expect(inserted.status == .ok && inserted.total == 3)
            let id = try #require(inserted.transactionID)
            var progress = try await client.insertStatus(InsertStatusRequest(transactionID: id)).result.first
            for _ in 0..<1200 where progress?.isFinished != true {  // a minute at most: a bound, not a measurement
                try await Task.sleep(for: .milliseconds(50))
                progress = try await client.insertStatus(InsertStatusRequest(transactionID: id)).result.first
            }
            let finished = try #require(progress)
            #expect(finished.isFinished && finished.total == 3 && finished.successCount == 1 && finished.failCount == 2)
            #expect(finished.errorList.map(\.imageName) == ["broken", "far"])
            #expect(finished.errorList.map(\.index) == [1, 2])
            #expect(finished.errorList.first?.message.contains("truncated JPEG") == true, "\(finished.errorList)")
            #expect(finished.errorList.last?.message.contains("`ImageSourcePolicy.remoteFetch`") == true, "\(finished.errorList)")

            let search = SearchRequest(imageName: "new_cat", parameters: Corpus.parameters { $0.filters = [Filter(field: "shelf", value: "7")]; $0.fields = ["brand"] })
            let found = try await client.search(search)
            #expect(found.result.map(\.imageName) == ["new_cat"] && found.result.first?.valueMap == ["brand": "acme"])
            let removed = try await client.remove(RemoveRequest(imageNames: ["new_cat"]))
            #expect(removed.status == .ok && removed.total == 1)
            do {
                _ = try await client.search(search)
                Issue.record("the removed image was found")
            } catch {
                guard case .http(404, _, _)? = error as? ClientError else { Issue.record("expected a 404, got \(error)"); return }
            }
            do {
                _ = try await client.insertStatus(InsertStatusRequest(transactionID: "123"))
                Issue.record("an unknown transaction had a status")
            } catch {
                guard case .http(400, _, let message?)? = error as? ClientError else { Issue.record("expected a 400, got \(error)"); return }
                #expect(message.contains("no insert transaction 123"))
            }
        }
    }

    @Test("a server that stops mid-insert leaves no transaction running, and its saved progress is what was committed")
    func insertStoppedWithServer() async throws {
        let running = try await ServerFixture.live { $0.imageRoots = [Repository.images] }
        let client = ServerFixture.client(running.url)
        let items = (0..<1000).map { InsertItem(imageName: "copy\($0)", imageURL: "file://" + Repository.images + "/grace_hopper.jpg") }
        let before = try await running.server.catalog.count()
        let id = try #require(try await client.insert(InsertRequest(items: items)).transactionID)
        while try await running.server.catalog.count() < before + 16 { try await Task.sleep(for: .milliseconds(20)) }
        await running.stop()
        #expect(running.server.service.runningInserts == 0)
        let saved = try #require(try await running.server.service.insertStatus(InsertStatusRequest(transactionID: id)).result.first)
        let committed = try await running.server.catalog.count() - before
        // Whether the server stopped it mid-way (usually) or it had already finished, what its status says is what was committed.
        #expect(saved.successCount == committed, "\(saved) vs \(committed) committed")
    }
}
