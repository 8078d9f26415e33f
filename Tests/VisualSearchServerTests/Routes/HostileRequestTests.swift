import Foundation
import Testing
@testable import VisualSearch
@testable import VisualSearchServer

/// Requests no SDK would send: each gets a 4xx with the API's error JSON,
/// and the server keeps answering.
@Suite("Hostile requests")
struct HostileRequestTests {
    func stillAnswering(_ url: URL) async throws {
        let health = try await TestServer.raw(URL(string: "\(url)/health")!)
        #expect(health.status == 200 && health.json["status"] as? String == "OK")
    }

    @Test("invalid parameters: 400 with the ViSearch error shape naming the problem",
          arguments: [("search?im_name=chelsea_cat&page=0", "page"), ("search?im_name=chelsea_cat&fq=nope:1", "nope"),
                      ("search?im_name=chelsea_cat&limit=x", "limit"), ("colorsearch?color=zz00zz", "color"),
                      ("uploadsearch?im_id=1efad566233d148c4a7d7036c7505d9e.jpg&box=10,10,5,5", "box"),
                      ("search", "im_name"), ("uploadsearch", "image"), ("search?im_name=chelsea_cat&score=perhaps", "score"),
                      ("uploadsearch?im_url=ftp://x/y.jpg", "im_url")])
    func invalidParameters(path: String, mentions: String) async throws {
        let (url, _) = await TestServer.shared.get()
        let response = try await TestServer.raw(URL(string: "\(url)/\(path)")!)
        #expect(response.status == 400)
        #expect(response.json["status"] as? String == "fail")
        let errors = response.json["error"] as? [String] ?? []
        #expect(errors.first?.contains(mentions) == true, "\(errors)")
        #expect(response.json["result"] as? [Any] != nil && response.headers["x-log-id"] == response.json["reqid"] as? String)
    }

    @Test("an unknown im_name: 404 with the service's own message")
    func notFound() async throws {
        let (url, _) = await TestServer.shared.get()
        let response = try await TestServer.raw(URL(string: "\(url)/search?im_name=nothing_here")!)
        #expect(response.status == 404 && (response.json["error"] as? [String]) == ["Image not found with im_name."])
    }

    @Test("every file in badinput uploaded: never a 5xx, bad images get 400 with a reason")
    func badInputs() async throws {
        let (url, _) = await TestServer.shared.get()
        let files = FileManager.default.enumerator(atPath: TestServer.badInput)?.compactMap { $0 as? String }
            .filter { !$0.hasSuffix(".md") && !$0.hasSuffix(".tsv") }.sorted() ?? []
        #expect(files.count > 100)
        var refused = 0
        for file in files {
            var isDirectory: ObjCBool = false
            FileManager.default.fileExists(atPath: TestServer.badInput + "/" + file, isDirectory: &isDirectory)
            if isDirectory.boolValue { continue }
            var form = MultipartForm()
            form.append(file: "image", filename: "x", contentType: "application/octet-stream",
                        data: (try? Data(contentsOf: URL(fileURLWithPath: TestServer.badInput + "/" + file))).map(Array.init) ?? [])
            let response = try await TestServer.raw(URL(string: "\(url)/uploadsearch?limit=1")!, method: "POST",
                                                    headers: [("Content-Type", form.contentType)], body: form.encoded)
            #expect(response.status == 200 || response.status == 400, "\(file): \(response.status)")
            #expect(response.json["status"] as? String == (response.status == 200 ? "OK" : "fail"), "\(file)")
            if response.status == 400 {
                refused += 1
                let message = (response.json["error"] as? [String])?.first ?? ""
                #expect(message.hasPrefix("Invalid image") || message.hasPrefix("Invalid parameter image"), "\(file): \(message)")  // an empty file is no image at all
            }
        }
        #expect(refused > 30)
        try await stillAnswering(url)
    }

    @Test("garbage multipart bodies: 400, server still answering",
          arguments: ["not multipart at all", "--B\r\nContent-Disposition: form-data\r\n\r\nx\r\n--B--", "--B\r\nContent-Disposition: form-data; name=\"image\"\r\n\r\n\u{FF}\u{D8}"])
    func garbageMultipart(body: String) async throws {
        let (url, _) = await TestServer.shared.get()
        let response = try await TestServer.raw(URL(string: "\(url)/uploadsearch")!, method: "POST",
                                                headers: [("Content-Type", "multipart/form-data; boundary=B")], body: Array(body.utf8))
        #expect(response.status == 400 && response.json["status"] as? String == "fail")
        try await stillAnswering(url)
    }

    @Test("the Swift SDK's zero-part multipart body with im_id in the query works")
    func zeroPartBody() async throws {
        let (url, _) = await TestServer.shared.get()
        let first = try await TestServer.client(url).uploadSearch(.bytes(TestServer.bytes("coffee_cup.jpg")), parameters: SearchParameters())
        let form = MultipartForm()
        let response = try await TestServer.raw(URL(string: "\(url)/uploadsearch?im_id=\(first.imageID ?? "")&limit=1")!, method: "POST",
                                                headers: [("Content-Type", form.contentType)], body: form.encoded)
        #expect(response.status == 200 && ((response.json["result"] as? [[String: Any]])?.first?["im_name"] as? String) == "coffee_cup")
    }

    @Test("a body over the limit: 413 at once from Content-Length; the server keeps answering")
    func oversized() async throws {
        let (url, _) = await TestServer.start { $0.maxBodyBytes = 1 << 20 }
        var form = MultipartForm()
        form.append(file: "image", filename: "x.jpg", contentType: "image/jpeg", data: [UInt8](repeating: 0xFF, count: 3 << 20))
        let response = try await TestServer.raw(URL(string: "\(url)/uploadsearch")!, method: "POST",
                                                headers: [("Content-Type", form.contentType)], body: form.encoded)
        #expect(response.status == 413 && (response.json["error"] as? [String])?.first?.contains("1048576") == true)
        try await stillAnswering(url)
    }

    @Test("auth: wrong or missing credentials get 401 JSON; app key, Basic and ProductSearch app_key pass")
    func auth() async throws {
        let (url, _) = await TestServer.start { $0.credentials = try! ServerCredentials(lines: "app-1\nACCESS:SECRET") }
        let path = "\(url)/search?im_name=chelsea_cat&limit=1"
        #expect(try await TestServer.raw(URL(string: path)!).status == 401)
        let wrong = try await TestServer.raw(URL(string: path + "&access_key=nope")!)
        #expect(wrong.status == 401 && (wrong.json["error"] as? [String]) == ["Invalid access key"])
        #expect(try await TestServer.raw(URL(string: path)!, headers: [("Authorization", "Basic " + Data("ACCESS:WRONG".utf8).base64EncodedString())]).status == 401)
        let viaAppKey = try await TestServer.client(url, credentials: .appKey("app-1")).search(imageName: "chelsea_cat", parameters: SearchParameters())
        #expect(viaAppKey.status == .ok)
        let viaBasic = try await TestServer.client(url, credentials: .accessKey("ACCESS", secret: "SECRET")).search(imageName: "chelsea_cat", parameters: SearchParameters())
        #expect(viaBasic.status == .ok)
        let product = try await TestServer.raw(URL(string: "\(url)/v1/product/recommendations/chelsea_cat?app_key=nope&placement_id=1")!)
        #expect(product.status == 401 && (product.json["error"] as? [String: Any])?["code"] as? Int == 401)
        #expect(try await TestServer.raw(URL(string: "\(url)/v1/product/recommendations/chelsea_cat?app_key=app-1&placement_id=1")!).status == 200)
        #expect(try await TestServer.raw(URL(string: "\(url)/health")!).status == 200)
    }

    @Test("the request deadline: a slow request gets 503 JSON")
    func deadline() async throws {
        let (url, _) = await TestServer.start { $0.requestTimeout = 0.3 }
        // A body that never finishes arriving keeps the request open past the deadline.
        let stalled = Task { () -> (Int, String?) in
            let response = try await TestServer.raw(URL(string: "\(url)/uploadsearch")!, method: "POST",
                                                    headers: [("Content-Type", "multipart/form-data; boundary=B"), ("Content-Length", "100000")],
                                                    body: Array("--B\r\n".utf8))
            return (response.status, (response.json["error"] as? [String])?.first)
        }
        if let (status, message) = try? await stalled.value { #expect(status == 503 && message?.contains("timed out") == true) }
        try await stillAnswering(url)
    }

    @Test("more requests in flight than the cap: 503 with Retry-After, then normal service")
    func concurrencyCap() async throws {
        let (url, _) = await TestServer.start { $0.maxConcurrentRequests = 1; $0.requestTimeout = 2 }
        // The first request holds the only slot: its body never finishes arriving.
        let holder = Task { _ = try? await TestServer.raw(URL(string: "\(url)/uploadsearch")!, method: "POST",
                                                          headers: [("Content-Type", "multipart/form-data; boundary=B"), ("Content-Length", "100000")],
                                                          body: Array("--B\r\n".utf8)) }
        try await Task.sleep(nanoseconds: 300_000_000)
        let refused = try await TestServer.raw(URL(string: "\(url)/search?im_name=chelsea_cat")!)
        #expect(refused.status == 503 && refused.headers["retry-after"] == "1")
        #expect((refused.json["error"] as? [String])?.first?.contains("busy") == true)
        _ = await holder.value
        #expect(try await TestServer.raw(URL(string: "\(url)/search?im_name=chelsea_cat")!).status == 200)
    }
}

/// Parameters arrive wherever an SDK puts them (wire-protocol.md §1.5).
@Suite("Parameter merging")
struct ParameterMergingTests {
    @Test("Java: a form-urlencoded POST body")
    func formBody() async throws {
        let (url, _) = await TestServer.shared.get()
        let response = try await TestServer.raw(URL(string: "\(url)/recommendations")!, method: "POST",
                                                headers: [("Content-Type", "application/x-www-form-urlencoded")],
                                                body: Array("im_name=coffee_cup&limit=2&fl=brand&fq=category%3Afood".utf8))
        #expect(response.status == 200 && (response.json["result"] as? [[String: Any]])?.count == 2)
        #expect(((response.json["result"] as? [[String: Any]])?.first?["value_map"] as? [String: String])?["brand"] != nil)
    }

    @Test("Java/JS: multipart text parts beside the image; a body value overrides the query string")
    func multipartTextParts() async throws {
        let (url, _) = await TestServer.shared.get()
        var form = MultipartForm()
        form.append(field: "limit", value: "3")
        form.append(field: "facets", value: "brand,category")
        form.append(file: "image", filename: "photo.jpg", contentType: "image/jpeg", data: TestServer.bytes("coffee_cup.jpg"))
        let response = try await TestServer.raw(URL(string: "\(url)/uploadsearch?limit=9")!, method: "POST",
                                                headers: [("Content-Type", form.contentType)], body: form.encoded)
        #expect(response.status == 200 && response.json["limit"] as? Int == 3)
        #expect((response.json["facets"] as? [[String: Any]])?.map { $0["key"] as? String } == ["brand", "category"])
    }

    @Test("Android: GET /uploadsearch with im_url only; ProductSearch with no body at all")
    func noBody() async throws {
        let (url, _) = await TestServer.shared.get()
        let get = try await TestServer.raw(URL(string: "\(url)/uploadsearch?im_url=\(TestServer.images)/coffee_cup.jpg&limit=1")!)
        #expect(get.status == 200 && ((get.json["result"] as? [[String: Any]])?.first?["im_name"] as? String) == "coffee_cup")
        let post = try await TestServer.raw(URL(string: "\(url)/v1/product/search_by_image?app_key=a&placement_id=1&im_url=\(TestServer.images)/coffee_cup.jpg&limit=1")!,
                                            method: "POST")
        #expect(post.status == 200 && ((post.json["result"] as? [[String: Any]])?.first?["product_id"] as? String) == "coffee_cup")
    }
}
