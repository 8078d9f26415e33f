import Foundation
import ImageOps
import SearchEngine
import TestSupport
import Testing
import VisualSearch
@testable import VisualSearchServer
import SQLiteCatalog

/// `/images/{im_name}`: originals and the Rezolve thumbnails, made on first
/// request, kept on disk, revalidated with ETags — and only catalog images.
@Suite("Image routes", .timeLimit(.minutes(10)))
struct ImageRoutesTests {
    /// A catalog of a few corpus images copied to a folder the test may change, plus a PNG; and a thumbnail folder.
    struct Fixture {
        let images: String
        let catalog: String
        let thumbnails: String

        static func make() async throws -> Fixture {
            let root = Repository.temporaryDirectory("images")
            let images = root + "/images"
            try FileManager.default.createDirectory(atPath: images, withIntermediateDirectories: true)
            for name in ["chelsea_cat.jpg", "greek_coins.jpg", "oc_handshake_01.jpg"] {
                try FileManager.default.copyItem(atPath: Repository.images + "/" + name, toPath: images + "/" + name)
            }
            let cat = try ImageDecoder.decode(Repository.bytes("chelsea_cat.jpg"), source: "chelsea_cat.jpg").pixels
            try FileIO.write(try ImageEncoders.PNG().encode(cat), to: images + "/cat_png.png")
            let catalog = root + "/catalog.sqlite"
            let store = try await SQLiteCatalogStore(path: catalog, creating: true)
            _ = try await Indexer(store: store).run(directory: images)
            return Fixture(images: images, catalog: catalog, thumbnails: root + "/thumbnails")
        }

        func server() async throws -> VisualSearchServer<VisualSearchEngine> {
            try await ServerFixture.server(catalog: catalog) { $0.thumbnailCache = thumbnails }
        }

        /// Files in the thumbnail folder.
        var kept: [String] {
            (FileManager.default.enumerator(atPath: thumbnails)?.allObjects as? [String] ?? []).filter { $0.count > 3 && !$0.hasPrefix(".") }
        }
    }

    static func size(_ bytes: [UInt8]) throws -> PixelSize { try ImageDecoder.readHeader(bytes, source: "reply").size }

    @Test("the original is the source file's bytes, with its type, an ETag, Cache-Control and nosniff")
    func original() async throws {
        let fixture = try await Fixture.make()
        let reply = try await ServerFixture.router(try await fixture.server()) { try await $0.send("/images/chelsea_cat") }
        #expect(reply.status == 200)
        #expect(reply.body == Array(FileManager.default.contents(atPath: fixture.images + "/chelsea_cat.jpg")!))
        #expect(reply.headers["content-type"] == "image/jpeg")
        #expect(reply.headers["etag"]?.hasPrefix("\"o-") == true)
        #expect(reply.headers["cache-control"] == ImageRoutes.cacheControl)
        #expect(reply.headers["x-content-type-options"] == "nosniff")
        #expect(fixture.kept.isEmpty)
    }

    @Test("size=400 is the rule's thumbnail (longer side 400, aspect kept), made once and then read from the folder")
    func thumbnail() async throws {
        let fixture = try await Fixture.make()
        let server = try await fixture.server()
        let (first, second) = try await ServerFixture.router(server) { client in
            (try await client.send("/images/chelsea_cat?size=400"), try await client.send("/images/chelsea_cat?size=400"))
        }
        #expect(first.status == 200 && first.headers["content-type"] == "image/jpeg")
        #expect(try Self.size(first.body) == ThumbnailRule.rezolve.thumbnails(for: PixelSize(width: 451, height: 300))[0])
        #expect(try Self.size(first.body) == PixelSize(width: 400, height: 266))
        #expect(first.headers["etag"]?.hasPrefix("\"t400-") == true)
        #expect(fixture.kept.count == 1)
        #expect(second.body == first.body && second.headers["etag"] == first.headers["etag"])
        // What is kept is what was served; a second request reads it (the file is not made again).
        let keptPath = fixture.thumbnails + "/" + fixture.kept[0]
        #expect(Array(FileManager.default.contents(atPath: keptPath)!) == first.body)
        try FileIO.writeAtomically(Array("kept".utf8), to: keptPath)
        let third = try await ServerFixture.router(server) { try await $0.send("/images/chelsea_cat?size=400") }
        #expect(third.text == "kept")
    }

    @Test("a PNG source gets a PNG thumbnail")
    func pngThumbnail() async throws {
        let fixture = try await Fixture.make()
        let reply = try await ServerFixture.router(try await fixture.server()) { try await $0.send("/images/cat_png?size=400") }
        #expect(reply.status == 200 && reply.headers["content-type"] == "image/png")
        #expect(try Self.size(reply.body) == PixelSize(width: 400, height: 266))
    }

    @Test("an image not larger than the size asked is answered with its original")
    func smallImageGivesOriginal() async throws {
        let fixture = try await Fixture.make()
        let (small, large) = try await ServerFixture.router(try await fixture.server()) { client in
            (try await client.send("/images/greek_coins?size=400"), try await client.send("/images/oc_handshake_01?size=800"))
        }
        #expect(small.status == 200 && small.body == Array(FileManager.default.contents(atPath: fixture.images + "/greek_coins.jpg")!))
        #expect(large.status == 200 && large.body == Array(FileManager.default.contents(atPath: fixture.images + "/oc_handshake_01.jpg")!))
        #expect(fixture.kept.isEmpty)
    }

    @Test("If-None-Match with the ETag is 304 with no body; another tag, or a changed file, is 200 with a new tag and thumbnail")
    func revalidation() async throws {
        let fixture = try await Fixture.make()
        let server = try await fixture.server()
        let first = try await ServerFixture.router(server) { try await $0.send("/images/chelsea_cat?size=400") }
        let tag = try #require(first.headers["etag"])
        let (same, weak, other) = try await ServerFixture.router(server) { client in
            (try await client.send("/images/chelsea_cat?size=400", headers: [("If-None-Match", tag)]),
             try await client.send("/images/chelsea_cat?size=400", headers: [("If-None-Match", "\"x\", W/\(tag)")]),
             try await client.send("/images/chelsea_cat?size=400", headers: [("If-None-Match", "\"something-else\"")]))
        }
        #expect(same.status == 304 && same.body.isEmpty && same.headers["etag"] == tag)
        #expect(weak.status == 304)
        #expect(other.status == 200 && other.body == first.body)
        // The source changes (another picture under the same name): new tag, new thumbnail, old one never served.
        try FileIO.writeAtomically(Repository.bytes("oc_handshake_01.jpg"), to: fixture.images + "/chelsea_cat.jpg")
        let changed = try await ServerFixture.router(server) { try await $0.send("/images/chelsea_cat?size=400", headers: [("If-None-Match", tag)]) }
        #expect(changed.status == 200 && changed.headers["etag"] != tag)
        #expect(try Self.size(changed.body) == PixelSize(width: 400, height: 300))
    }

    @Test("only catalog images by name: unknown names and paths are 404, a size off the rule is 400 naming the sizes")
    func refusals() async throws {
        let fixture = try await Fixture.make()
        let replies = try await ServerFixture.router(try await fixture.server()) { client in
            [try await client.send("/images/no_such_image"),
             try await client.send("/images/..%2F..%2F..%2Fetc%2Fpasswd"),
             try await client.send("/images/%2Fetc%2Fpasswd"),
             try await client.send("/images/chelsea_cat.jpg"),
             try await client.send("/images/chelsea_cat?size=500"),
             try await client.send("/images/chelsea_cat?size=abc")]
        }
        #expect(replies[0...3].allSatisfy { $0.status == 404 && $0.json["status"] as? String == "fail" })
        #expect(replies[0].errors.first?.contains("no image named no_such_image") == true)
        #expect(!replies[1].text.contains("root:"))
        #expect(replies[4].status == 400 && replies[4].errors.first?.contains("400, 800, 1200, 1600") == true)
        #expect(replies[5].status == 400)
    }

    @Test("a source that went missing is 404; one that turned corrupt is 422 naming the image; the server goes on serving")
    func brokenSources() async throws {
        let fixture = try await Fixture.make()
        try FileManager.default.removeItem(atPath: fixture.images + "/greek_coins.jpg")
        try FileIO.writeAtomically(Array(Repository.bytes("chelsea_cat.jpg").prefix(600)), to: fixture.images + "/oc_handshake_01.jpg")
        let replies = try await ServerFixture.router(try await fixture.server()) { client in
            [try await client.send("/images/greek_coins"), try await client.send("/images/greek_coins?size=400"),
             try await client.send("/images/oc_handshake_01?size=400"), try await client.send("/images/chelsea_cat?size=400")]
        }
        #expect(replies[0].status == 404 && replies[1].status == 404)
        #expect(replies[0].errors.first?.contains("missing or unreadable") == true)
        #expect(!replies[0].text.contains(fixture.images))
        #expect(replies[2].status == 422 && replies[2].errors.first?.contains("oc_handshake_01") == true)
        #expect(replies[3].status == 200)
        #expect(fixture.kept.count == 1)  // nothing half-written for the corrupt one
    }

    @Test("eight simultaneous first requests for one thumbnail make it once and all get the same bytes")
    func simultaneousFirstRequests() async throws {
        let fixture = try await Fixture.make()
        let server = try await fixture.server()
        let bodies = try await ServerFixture.router(server) { client in
            try await withThrowingTaskGroup(of: [UInt8].self) { group in
                for _ in 0..<8 { group.addTask { try await client.send("/images/oc_handshake_01?size=400").body } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        #expect(bodies.count == 8 && Set(bodies).count == 1 && !bodies[0].isEmpty)
        #expect(fixture.kept.count == 1)
    }

    @Test("an unwritable thumbnail folder: thumbnails are still made and served")
    func unwritableFolder() async throws {
        let fixture = try await Fixture.make()
        try Data().write(to: URL(fileURLWithPath: fixture.thumbnails))  // a file where the folder should be
        let reply = try await ServerFixture.router(try await fixture.server()) { try await $0.send("/images/chelsea_cat?size=400") }
        #expect(reply.status == 200)
        #expect(try Self.size(reply.body) == PixelSize(width: 400, height: 266))
    }
}
