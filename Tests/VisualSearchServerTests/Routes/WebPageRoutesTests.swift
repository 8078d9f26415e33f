import Foundation
import TestSupport
import Testing
@testable import VisualSearchServer

/// The web page's routes: the built-in files, their types and security
/// headers, and nothing else reachable through them.
@Suite("Web page routes", .timeLimit(.minutes(10)))
struct WebPageRoutesTests {
    static let folder = Repository.root + "/Sources/VisualSearchServer/WebPage"

    @Test("every file of WebPage/ is built into the binary, byte for byte, and nothing else is")
    func embeddedFilesMatchTheFolder() throws {
        let onDisk = try FileManager.default.contentsOfDirectory(atPath: Self.folder).filter { !$0.hasPrefix(".") }.sorted()
        #expect(WebPageFiles.all.map(\.0).sorted() == onDisk)
        for (name, bytes) in WebPageFiles.all {
            #expect(bytes == Array(FileManager.default.contents(atPath: Self.folder + "/" + name) ?? Data()), "\(name) differs from the folder")
            #expect(WebAssets.isAssetName(name), "\(name) is not a name the routes serve")
        }
    }

    @Test("/ and /analytics are HTML with the Content-Security-Policy, nosniff and no-cache")
    func pages() async throws {
        let server = try await ServerFixture.server()
        let (index, analytics) = try await ServerFixture.router(server) { client in
            (try await client.send("/"), try await client.send("/analytics"))
        }
        for reply in [index, analytics] {
            #expect(reply.status == 200)
            #expect(reply.headers["content-type"] == "text/html; charset=utf-8")
            #expect(reply.headers["content-security-policy"] == WebPageRoutes.contentSecurityPolicy)
            #expect(reply.headers["x-content-type-options"] == "nosniff")
            #expect(reply.headers["cache-control"] == "no-cache")
            #expect(reply.text.lowercased().contains("<!doctype html>"))
        }
        #expect(!WebPageRoutes.contentSecurityPolicy.contains("unsafe-inline") && !WebPageRoutes.contentSecurityPolicy.contains("unsafe-eval"))
    }

    @Test("no page holds inline script, inline style or an event-handler attribute (the policy would block them)")
    func noInlineCode() throws {
        for (name, bytes) in WebPageFiles.all where name.hasSuffix(".html") {
            let html = String(decoding: bytes, as: UTF8.self).lowercased()
            let scripts = html.components(separatedBy: "<script").dropFirst()
            #expect(scripts.allSatisfy { $0.prefix(while: { $0 != ">" }).contains("src=") }, "\(name) has an inline script")
            #expect(!html.contains("<style") && !html.contains(" style="), "\(name) has inline style")
            #expect(html.range(of: #"\son[a-z]+\s*="#, options: .regularExpression) == nil, "\(name) has an event-handler attribute")
        }
    }

    @Test("/ui/ serves the modules and styles with their types, and an ETag answered with 304")
    func assets() async throws {
        let server = try await ServerFixture.server()
        let script = try #require(WebPageFiles.all.first { $0.0.hasSuffix(".js") }?.0)
        let style = try #require(WebPageFiles.all.first { $0.0.hasSuffix(".css") }?.0)
        let (js, css) = try await ServerFixture.router(server) { client in
            (try await client.send("/ui/" + script), try await client.send("/ui/" + style))
        }
        #expect(js.status == 200 && js.headers["content-type"] == "text/javascript; charset=utf-8")
        #expect(css.status == 200 && css.headers["content-type"] == "text/css; charset=utf-8")
        let tag = try #require(js.headers["etag"])
        let again = try await ServerFixture.router(server) { try await $0.send("/ui/" + script, headers: [("If-None-Match", tag)]) }
        #expect(again.status == 304 && again.body.isEmpty)
    }

    @Test("/ui/ names only page files: paths, hidden names, other types and unknown files are 404")
    func onlyPageFiles() async throws {
        let server = try await ServerFixture.server()
        let replies = try await ServerFixture.router(server) { client in
            [try await client.send("/ui/..%2F..%2F..%2FPackage.swift"), try await client.send("/ui/%2Fetc%2Fpasswd"),
             try await client.send("/ui/.hidden.js"), try await client.send("/ui/WebAssets.swift"), try await client.send("/ui/nope.js"),
             try await client.send("/ui/")]
        }
        for reply in replies {
            #expect(reply.status == 404)
            #expect(!reply.text.contains("PackageDescription") && !reply.text.contains("root:"))
        }
        #expect(!WebAssets.isAssetName("../x.js") && !WebAssets.isAssetName("a/b.js") && !WebAssets.isAssetName(".x.js")
            && !WebAssets.isAssetName("App.js") && !WebAssets.isAssetName("x.swift") && WebAssets.isAssetName("app.js"))
    }

    @Test("--web-root serves the page's files from a folder, read on each request")
    func webRoot() async throws {
        let folder = Repository.temporaryDirectory("webroot")
        try "<!doctype html><p>one".write(toFile: folder + "/index.html", atomically: true, encoding: .utf8)
        let server = try await ServerFixture.server { $0.webRoot = folder }
        let first = try await ServerFixture.router(server) { try await $0.send("/") }
        try "<!doctype html><p>two".write(toFile: folder + "/index.html", atomically: true, encoding: .utf8)
        let second = try await ServerFixture.router(server) { try await $0.send("/") }
        #expect(first.text.hasSuffix("one") && second.text.hasSuffix("two"))
        #expect(second.headers["content-security-policy"] == WebPageRoutes.contentSecurityPolicy)
    }

    @Test("--no-web-page: / is 404 and the API still answers")
    func apiOnly() async throws {
        let server = try await ServerFixture.server { $0.servesWebPage = false }
        let (page, search) = try await ServerFixture.router(server) { client in
            (try await client.send("/"), try await client.send("/search?im_name=chelsea_cat&limit=2"))
        }
        #expect(page.status == 404)
        #expect(search.status == 200 && search.names.count == 2)
    }
}
