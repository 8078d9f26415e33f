import Foundation
import ImageOps
import HummingbirdTesting
import Networking
import SearchEngine
import TestSupport
import Testing
import VisualSearch
@testable import VisualSearchServer
import SQLiteCatalog
import CatalogStores

/// What a request may make the server read or fetch (`im_url` of uploads,
/// discover and ProductSearch; the data API's inserts): local files only
/// under `--image-root` after `..` and symbolic links are resolved; remote
/// images only with `--allow-remote-fetch`, and then only public addresses —
/// by name, by DNS or through a redirect — unless a host is allowed
/// explicitly; never more than the size cap, never longer than the fetch
/// timeout. Refusals are 400s that never echo what a file holds, nor a secret.
@Suite("Security: image sources and secrets", .timeLimit(.minutes(10)))
struct SecurityTests {
    /// The endpoints that take `im_url`.
    static let imageEndpoints = ["/uploadsearch?limit=1&im_url=", "/discoversearch?limit=1&im_url=",
                                 "/v1/product/search_by_image?limit=1&placement_id=1&im_url="]

    /// Percent-encodes a location for a query string.
    static func escaped(_ location: String) -> String {
        location.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~/"))) ?? location
    }

    /// The message of a ViSearch or ProductSearch error body.
    static func message(_ reply: Reply) -> String {
        reply.errors.first ?? ((reply.json["error"] as? [String: Any])?["message"] as? String) ?? ""
    }

    /// A folder of images to serve as a root, beside a folder outside it:
    /// `root/inside.jpg`; `outside/secret.jpg` (a real image, so reading it would index it); in the root, symbolic
    /// links to it and to `/etc/passwd`; `root-evil/x.jpg`, a sibling whose name starts with the root's.
    struct Layout {
        let base: String
        var root: String { base + "/root" }
        var outside: String { base + "/outside" }

        init() throws {
            base = Repository.temporaryDirectory("roots")
            let manager = FileManager.default
            for folder in ["/root", "/outside", "/root-evil"] { try manager.createDirectory(atPath: base + folder, withIntermediateDirectories: true) }
            try Data(Repository.bytes("coffee_cup.jpg")).write(to: URL(fileURLWithPath: base + "/root/inside.jpg"))
            try Data(Repository.bytes("chelsea_cat.jpg")).write(to: URL(fileURLWithPath: base + "/outside/secret.jpg"))
            try Data(Repository.bytes("astronaut.jpg")).write(to: URL(fileURLWithPath: base + "/root-evil/x.jpg"))
            try Data("root:x:0:0:SECRET-IN-A-TEXT-FILE\n".utf8).write(to: URL(fileURLWithPath: base + "/root/notes.txt"))
            try manager.createSymbolicLink(atPath: base + "/root/link.jpg", withDestinationPath: base + "/outside/secret.jpg")
            try manager.createSymbolicLink(atPath: base + "/root/passwd", withDestinationPath: "/etc/passwd")
            try manager.createSymbolicLink(atPath: base + "/root/up", withDestinationPath: base + "/outside")
        }

        /// Locations that name files outside the root, each in its own way.
        var escapes: [(String, String)] {
            [("file:///etc/passwd", "an absolute file outside"),
             ("file://" + root + "/../outside/secret.jpg", "`..` out of the root"),
             ("file://" + root + "/%2E%2E/outside/secret.jpg", "percent-encoded `..`"),
             (root + "/../outside/secret.jpg", "a plain path with `..`"),
             ("file://" + root + "/link.jpg", "a symbolic link to an image outside"),
             ("file://" + root + "/passwd", "a symbolic link to /etc/passwd"),
             ("file://" + root + "/up/secret.jpg", "through a symbolic link to a folder outside"),
             ("file://" + root + "/up/../root-evil/x.jpg", "`..` after a symbolic link to a folder outside"),
             ("file://" + base + "/root-evil/x.jpg", "a sibling folder whose name starts with the root's")]
        }
    }

    // MARK: - Local files without image roots

    @Test("without image roots, no im_url names a local file: 400 naming --image-root, nothing of the file in the body",
          arguments: ["file:///etc/shadow", "file:///etc/passwd", "/etc/passwd", "file://localhost/etc/passwd", "file:" + Repository.images + "/coffee_cup.jpg",
                      "file://" + Repository.images + "/coffee_cup.jpg"])
    func noRoots(location: String) async throws {
        // Named as `vsearch serve` names them: a server tells its clients the flag its operator would change.
        let server = try await ServerFixture.server { $0.settingNames = Self.serveFlags }
        let replies = try await ServerFixture.router(server) { client in
            var replies: [Reply] = []
            for endpoint in Self.imageEndpoints { replies.append(try await client.send(endpoint + Self.escaped(location))) }
            return replies
        }
        for (endpoint, reply) in zip(Self.imageEndpoints, replies) {
            #expect(reply.status == 400, "\(endpoint): \(reply.status) \(reply.text)")
            #expect(Self.message(reply).contains("im_url"), "\(endpoint): \(Self.message(reply))")
            #expect(!reply.text.contains("root:") && !reply.text.contains("/bin/"), "\(endpoint): the body echoes the file")
        }
        if location.hasPrefix("/") || location.hasPrefix("file://") {
            #expect(replies.allSatisfy { Self.message($0).contains("--image-root") }, "\(replies.map(Self.message))")
        }
    }

    @Test("relative paths and other schemes are refused, with or without image roots",
          arguments: ["etc/passwd", "../../../../etc/passwd", "~/.ssh/id_rsa", "ftp://example.com/x.jpg", "gopher://127.0.0.1:6379/_INFO",
                      "data:image/jpeg;base64,/9j/", "file://example.com/etc/passwd", "coffee_cup.jpg"])
    func relativeAndForeign(location: String) async throws {
        let server = try await ServerFixture.server { $0.imageRoots = [Repository.images] }
        let reply = try await ServerFixture.router(server) { try await $0.send("/uploadsearch?im_url=" + Self.escaped(location)) }
        #expect(reply.status == 400)
        #expect(Self.message(reply).hasPrefix("Invalid parameter im_url"), "\(Self.message(reply))")
        #expect(!reply.text.contains("root:"))
    }

    // MARK: - Local files under image roots

    @Test("with the corpus as image root: its files are searched by im_url; `..` out of it to Package.swift is refused")
    func corpusRoot() async throws {
        let server = try await ServerFixture.server { $0.imageRoots = [Repository.images] }
        let inside = "file://" + Repository.images + "/coffee_cup.jpg"
        let roundabout = "file://" + Repository.images + "/../images/coffee_cup.jpg"
        let escape = "file://" + Repository.images + "/../../Package.swift"
        let (works, alsoWorks, refused) = try await ServerFixture.router(server) { client in
            (try await client.send("/uploadsearch?limit=1&im_url=" + Self.escaped(inside)),
             try await client.send("/uploadsearch?limit=1&im_url=" + Self.escaped(roundabout)),
             try await client.send("/uploadsearch?limit=1&im_url=" + Self.escaped(escape)))
        }
        #expect(works.status == 200 && works.names == ["coffee_cup"])
        #expect(alsoWorks.status == 200 && alsoWorks.names == ["coffee_cup"], "a `..` that stays inside the root is fine")
        #expect(refused.status == 400 && Self.message(refused).contains("not inside an image root"), "\(Self.message(refused))")
        #expect(!refused.text.contains("PackageDescription"))
    }

    @Test("with a temporary image root: its image is searched; every way out of it is refused, on every im_url endpoint")
    func temporaryRoot() async throws {
        let layout = try Layout()
        let server = try await ServerFixture.server {
            $0.imageRoots = [layout.root]
            // Dozens of refusals from one client in a row: here each must be the path's own 400, not the refusal budget's 429.
            $0.limits.clients.refusalsPerSecond = 0
        }
        let (works, refusals) = try await ServerFixture.router(server) { client in
            let works = try await client.send("/uploadsearch?limit=1&im_url=" + Self.escaped("file://" + layout.root + "/inside.jpg"))
            var refusals: [(String, String, Reply)] = []
            for (location, how) in layout.escapes {
                for endpoint in Self.imageEndpoints { refusals.append((how, endpoint, try await client.send(endpoint + Self.escaped(location)))) }
            }
            return (works, refusals)
        }
        #expect(works.status == 200 && works.names == ["coffee_cup"])
        for (how, endpoint, reply) in refusals {
            #expect(reply.status == 400, "\(how) via \(endpoint): HTTP \(reply.status)")
            let message = Self.message(reply)
            #expect(message.contains("not inside an image root") || message.contains("no readable file"), "\(how) via \(endpoint): \(message)")
            #expect(!reply.text.contains("root:x:0:0") && !reply.text.contains("chelsea"), "\(how) via \(endpoint)")
        }
    }

    @Test("a text file inside an image root is refused as not an image, without echoing a byte of it")
    func textInsideRoot() async throws {
        let layout = try Layout()
        let server = try await ServerFixture.server { $0.imageRoots = [layout.root] }
        let reply = try await ServerFixture.router(server) { try await $0.send("/uploadsearch?im_url=" + Self.escaped("file://" + layout.root + "/notes.txt")) }
        #expect(reply.status == 400 && Self.message(reply).contains("not an image vsearch reads"), "\(Self.message(reply))")
        #expect(!reply.text.contains("SECRET") && !reply.text.contains("root:"))
    }

    @Test("data API: an insert naming files outside the root lists a per-image error for each and indexes none of them")
    func insertOutsideRoot() async throws {
        let layout = try Layout()
        let server = try await ServerFixture.server(catalog: await Corpus.makeCatalog()) { $0.imageRoots = [layout.root] }
        var items = [InsertItem(imageName: "ok", imageURL: "file://" + layout.root + "/inside.jpg")]
        for (index, (location, _)) in layout.escapes.enumerated() { items.append(InsertItem(imageName: "escape\(index)", imageURL: location)) }
        items.append(InsertItem(imageName: "shadow", imageURL: "file:///etc/shadow"))
        items.append(InsertItem(imageName: "remote", imageURL: "http://169.254.169.254/latest/meta-data"))
        let body = Array(InsertItem.wireQuery(items).encoded.utf8)
        let names = items.map(\.imageName)
        let (inserted, status, searches) = try await ServerFixture.router(server) { client in
            let inserted = try await client.send("/insert", method: .post, headers: [("Content-Type", "application/x-www-form-urlencoded")], body: body)
            let id = inserted.json["trans_id"] as? String ?? "none"
            var status = try await client.send("/insert/status/\(id)")
            for _ in 0..<1200 where ((status.results.first?["processed_percent"] as? Int) ?? 0) < 100 {  // a minute at most
                try await Task.sleep(for: .milliseconds(50))
                status = try await client.send("/insert/status/\(id)")
            }
            var searches: [String: Int] = [:]
            for name in names { searches[name] = try await client.send("/search?im_name=\(name)").status }
            return (inserted, status, searches)
        }
        #expect(inserted.status == 200 && inserted.json["total"] as? Int == items.count)
        let progress = try #require(status.results.first)
        #expect(progress["processed_percent"] as? Int == 100)
        #expect(progress["success_count"] as? Int == 1 && progress["fail_count"] as? Int == items.count - 1)
        let errors = progress["error_list"] as? [[String: Any]] ?? []
        #expect(Set(errors.compactMap { $0["im_name"] as? String }) == Set(items.dropFirst().map(\.imageName)))
        for error in errors {
            let message = error["error_message"] as? String ?? ""
            #expect(message.contains("Invalid parameter im_url: cannot fetch"), "\(message)")
            #expect(!message.contains("root:x:0:0"))
        }
        #expect(searches["ok"] == 200)
        for item in items.dropFirst() { #expect(searches[item.imageName] == 404, "\(item.imageName) (\(item.imageURL)) was indexed") }
        #expect(!status.text.contains("root:x:0:0"))
    }

    // MARK: - Remote images

    /// The names `vsearch serve` gives the settings its errors mention.
    static let serveFlags: [SettingName: String] = [.imageRoots: "--image-root", .remoteFetch: "--allow-remote-fetch"]

    @Test("without --allow-remote-fetch an http(s) im_url is refused, saying how to allow it; nothing is connected to")
    func remoteFetchOff() async throws {
        let host = LoopbackStub([.serve(contentType: "image/jpeg", bytes: Repository.bytes("coffee_cup.jpg"))])
        defer { host.stop() }
        let server = try await ServerFixture.server {
            $0.allowedFetchHosts = [host.hostAndPort]  // an allowed host does not switch fetching on
            $0.settingNames = Self.serveFlags
        }
        let replies = try await ServerFixture.router(server) { client in
            [try await client.send("/uploadsearch?im_url=" + Self.escaped(host.url("/x.jpg").absoluteString)),
             try await client.send("/uploadsearch?im_url=" + Self.escaped("https://example.com/x.jpg"))]
        }
        for reply in replies {
            #expect(reply.status == 400 && Self.message(reply).contains("--allow-remote-fetch"), "\(Self.message(reply))")
        }
        #expect(host.connections == 0)
    }

    @Test("with --allow-remote-fetch, loopback is refused by address and by name, before any connection")
    func remoteFetchLoopback() async throws {
        let host = LoopbackStub([.serve(contentType: "image/jpeg", bytes: Repository.bytes("coffee_cup.jpg"))])
        defer { host.stop() }
        let server = try await ServerFixture.server {
            $0.allowRemoteFetch = true
            // Twelve refusals from one client in a row, as fast as the names resolve: each must be the destination
            // policy's own 400, not the refusal budget's 429 (burst 10, 5 a second; it answered the twelfth once).
            $0.limits.clients.refusalsPerSecond = 0
        }
        let locations = [host.url("/x.jpg").absoluteString, "http://localhost:\(host.port)/", "http://LOCALHOST.:\(host.port)/x.jpg",
                         "http://[::1]:\(host.port)/x.jpg", "http://[::ffff:127.0.0.1]:\(host.port)/x.jpg",
                         "http://127.1:\(host.port)/x.jpg", "http://2130706433:\(host.port)/x.jpg", "http://0x7f.0.0.1:\(host.port)/x.jpg",
                         "http://0.0.0.0:\(host.port)/x.jpg", "http://169.254.169.254/latest/meta-data", "http://10.0.0.1/x.jpg",
                         "https://192.168.1.1/x.jpg"]
        let replies = try await ServerFixture.router(server) { client in
            var replies: [Reply] = []
            for location in locations { replies.append(try await client.send("/uploadsearch?im_url=" + Self.escaped(location))) }
            return replies
        }
        for (location, reply) in zip(locations, replies) {
            #expect(reply.status == 400, "\(location): HTTP \(reply.status)")
            // Refused by the destination policy (a name may also fail to resolve at all: refused either way, never connected).
            let message = Self.message(reply)
            #expect(message.contains("address") || location.contains("LOCALHOST.") && message.contains("cannot resolve"), "\(location): \(message)")
        }
        #expect(host.connections == 0, "the server connected to a loopback host")
    }

    @Test("an allowed host is fetched; its redirect to cloud metadata or to another loopback host is refused, and that host never sees a connection")
    func remoteFetchAllowedAndRedirects() async throws {
        let image = LoopbackStub([.serve(contentType: "image/jpeg", bytes: Repository.bytes("coffee_cup.jpg"))])
        let other = LoopbackStub([.serve(contentType: "image/jpeg", bytes: Repository.bytes("chelsea_cat.jpg"))])
        let toMetadata = LoopbackStub([.redirect(to: "http://169.254.169.254/latest/meta-data")])
        let toOther = LoopbackStub([.redirect(to: other.url("/x.jpg").absoluteString)])
        let toFile = LoopbackStub([.redirect(to: "file:///etc/passwd")])
        defer {
            image.stop()
            other.stop()
            toMetadata.stop()
            toOther.stop()
            toFile.stop()
        }
        let server = try await ServerFixture.server {
            $0.allowRemoteFetch = true
            $0.allowedFetchHosts = [image.hostAndPort, toMetadata.hostAndPort, toOther.hostAndPort, toFile.hostAndPort]
        }
        let (fetched, metadata, redirected, file) = try await ServerFixture.router(server) { client in
            (try await client.send("/uploadsearch?limit=1&im_url=" + Self.escaped(image.url("/coffee.jpg").absoluteString)),
             try await client.send("/uploadsearch?im_url=" + Self.escaped(toMetadata.url("/a.jpg").absoluteString)),
             try await client.send("/uploadsearch?im_url=" + Self.escaped(toOther.url("/b.jpg").absoluteString)),
             try await client.send("/uploadsearch?im_url=" + Self.escaped(toFile.url("/c.jpg").absoluteString)))
        }
        #expect(fetched.status == 200 && fetched.names == ["coffee_cup"], "\(fetched.text)")
        #expect(image.connections == 1)
        #expect(metadata.status == 400 && Self.message(metadata).contains("169.254.169.254"), "\(Self.message(metadata))")
        #expect(toMetadata.requests.count == 1)
        #expect(redirected.status == 400 && Self.message(redirected).contains("loopback"), "\(Self.message(redirected))")
        #expect(toOther.requests.count == 1)
        #expect(other.connections == 0, "the redirect was followed to a host that is not allowed")
        #expect(file.status == 400 && !file.text.contains("root:"), "\(Self.message(file))")
    }

    /// A server whose engine fetches with a 1 MiB cap and a 1 s idle timeout, allowed to reach `hosts`.
    static func strictFetcher(allowing hosts: Set<String>) async throws -> VisualSearchServer<VisualSearchEngine> {
        var configuration = ServerConfiguration(catalog: .sqlite(path: await Corpus.sharedCatalog()), port: 0, allowRemoteFetch: true,
                                                allowedFetchHosts: hosts)
        configuration.requestTimeout = 60
        var engineConfiguration = VisualSearchEngine.Configuration()
        engineConfiguration.imageSources = configuration.imageSourcePolicy
        engineConfiguration.imageSources.maxDownloadBytes = 1 << 20
        engineConfiguration.imageSources.fetchTimeout = 1
        let store = try await SQLiteCatalogStore(path: await Corpus.sharedCatalog())
        let engine = try await OpenedCatalog(sqlite: store).engine(configuration: engineConfiguration)
        return VisualSearchServer(configuration: configuration, engine: engine, store: store, logger: ServerFixture.logger)
    }

    @Test("a remote image over the size cap is abandoned (declared or streamed), and a stalled one times out")
    func remoteFetchLimits() async throws {
        let declared = LoopbackStub([.oversized(bytes: 64 << 20)])
        let chunked = LoopbackStub([.oversizedChunked(bytes: 64 << 20)])
        let stalled = LoopbackStub([.stall])
        defer {
            declared.stop()
            chunked.stop()
            stalled.stop()
        }
        let server = try await Self.strictFetcher(allowing: [declared.hostAndPort, chunked.hostAndPort, stalled.hostAndPort])
        let (big, bigChunked, slow) = try await ServerFixture.router(server) { client in
            (try await client.send("/uploadsearch?im_url=" + Self.escaped(declared.url("/big.jpg").absoluteString)),
             try await client.send("/uploadsearch?im_url=" + Self.escaped(chunked.url("/big.jpg").absoluteString)),
             try await client.send("/uploadsearch?im_url=" + Self.escaped(stalled.url("/slow.jpg").absoluteString)))
        }
        #expect(big.status == 400 && Self.message(big).contains("larger than 1048576 bytes"), "\(Self.message(big))")
        #expect(bigChunked.status == 400 && Self.message(bigChunked).contains("larger than 1048576 bytes"), "\(Self.message(bigChunked))")
        #expect(slow.status == 400 && Self.message(slow).contains("no answer within 1"), "\(Self.message(slow))")
    }

    // MARK: - Secrets

    @Test("a refused im_url's secrets are not echoed: its query's keys are redacted in the message")
    func refusedURLRedacted() async throws {
        let server = try await ServerFixture.server { $0.allowRemoteFetch = true }
        let location = "http://user:hunter2@127.0.0.1:9/x.jpg?access_key=SECRET-KEY-1&sig=SECRET-SIG-2&w=1"
        let reply = try await ServerFixture.router(server) { try await $0.send("/uploadsearch?im_url=" + Self.escaped(location)) }
        #expect(reply.status == 400)
        #expect(!reply.text.contains("SECRET-KEY-1") && !reply.text.contains("SECRET-SIG-2") && !reply.text.contains("hunter2"), "\(reply.text)")
        #expect(Self.message(reply).contains("access_key=***"), "\(Self.message(reply))")
    }

    @Test("an app key never appears in a client error's description: the URL is redacted, whatever failed")
    func clientErrorsRedacted() async throws {
        let key = "APP-KEY-THAT-MUST-NOT-LEAK"
        let stub = LoopbackStub([.respond(401, body: #"{"status":"fail","error":["Invalid access key"]}"#), .respond(500, body: "{}"),
                                 .respond(200, body: "not json"), .oversized(bytes: 4 << 20), .stall])
        defer { stub.stop() }
        let closed = LoopbackStub.closedPort()
        func client(_ port: Int, credentials: ClientConfiguration.Credentials) -> ViSearchClient {
            ViSearchClient(configuration: ClientConfiguration(baseURL: URL(string: "http://127.0.0.1:\(port)")!, credentials: credentials,
                                                              timeout: 1, retry: .none, maxResponseBytes: 1 << 20))
        }
        var descriptions: [String] = []
        for _ in 0..<5 {
            do throws(ClientError) {
                _ = try await client(stub.port, credentials: .appKey(key)).search(SearchRequest(imageName: "a"))
                Issue.record("expected a failure")
            } catch {
                descriptions.append(error.description)
            }
        }
        do throws(ClientError) {
            _ = try await client(closed, credentials: .appKey(key)).search(SearchRequest(imageName: "a"))
        } catch {
            descriptions.append(error.description)
        }
        do throws(ClientError) {
            _ = try await client(closed, credentials: .accessKey("ACCESS", secret: key)).insert(InsertRequest(items: [InsertItem(imageName: "a", imageURL: "x")]))
        } catch {
            descriptions.append(error.description)
        }
        #expect(descriptions.count == 7)
        for description in descriptions {
            #expect(!description.contains(key), "\(description)")
        }
        #expect(descriptions.prefix(6).allSatisfy { $0.contains("access_key=***") }, "\(descriptions)")
        #expect(!ClientConfiguration.Credentials.appKey(key).description.contains(key))
        #expect(!ClientConfiguration.Credentials.accessKey("A", secret: key).description.contains(key))
    }
}
