import Foundation
import Networking
import SearchEngine
import TestSupport
import Testing
import VisualSearch

@Suite("QueryImageLoader", .timeLimit(.minutes(10)))
struct QueryImageLoaderTests {
    static func loader(_ policy: ImageSourcePolicy) -> QueryImageLoader {
        QueryImageLoader(policy: policy, cache: QueryImageCache(directory: Repository.temporaryDirectory("loader-cache")))
    }

    /// Loopback is private: tests that mean to reach the stub allow it explicitly.
    static let loopbackAllowed = DestinationPolicy(refusesNonPublicAddresses: false)

    static func reason(of error: VisualSearchError) -> String? {
        if case .fetch(_, let reason) = error { return reason }
        return nil
    }

    @Test("uploaded bytes are the query as they are")
    func bytes() async throws {
        #expect(try await Self.loader(.uploadsOnly).load(.bytes([1, 2, 3])) == [1, 2, 3])
    }

    @Test("an im_id reads the cache; a malformed or unknown one is an invalid im_id")
    func imageIDs() async throws {
        let loader = Self.loader(.uploadsOnly)
        let id = loader.cache.store(Repository.bytes("astronaut.jpg"))
        #expect(try await loader.load(.imageID(id)) == Repository.bytes("astronaut.jpg"))
        for bad in ["../../etc/passwd", String(repeating: "0", count: 32) + ".jpg"] {
            await #expect {
                try await loader.load(.imageID(bad))
            } throws: { error in
                guard case VisualSearchError.invalidParameter(let name, _) = error else { return false }
                return name == "im_id"
            }
        }
    }

    @Test("local files and file:// URLs are read only as the policy permits")
    func localFiles() async throws {
        let inside = Repository.images + "/astronaut.jpg"
        let rooted = Self.loader(ImageSourcePolicy(imageRoots: [Repository.images]))
        #expect(try await rooted.load(.url("file://" + inside)) == Repository.bytes("astronaut.jpg"))
        #expect(try await rooted.load(.url(inside)) == Repository.bytes("astronaut.jpg"))
        #expect(try await rooted.load(.file(inside)) == Repository.bytes("astronaut.jpg"))
        #expect(try await rooted.load(location: "file://" + inside) == Repository.bytes("astronaut.jpg"))
        for image in [QueryImage.url("file://" + inside), .file(inside), .url(inside)] {
            await #expect {
                try await Self.loader(.uploadsOnly).load(image)
            } throws: { error in
                (error as? VisualSearchError).flatMap(Self.reason)?.contains("`ImageSourcePolicy.imageRoots`") == true
            }
        }
    }

    @Test("im_url over http(s) is refused when remote fetching is off, naming --allow-remote-fetch, without connecting")
    func remoteRefused() async throws {
        let stub = LoopbackStub([.respond(200, body: "image bytes")])
        defer { stub.stop() }
        for url in [stub.url("/a.jpg").absoluteString, "https://images.example/a.jpg", "HTTP://images.example/a.jpg"] {
            await #expect {
                try await Self.loader(.uploadsOnly).load(.url(url))
            } throws: { error in
                (error as? VisualSearchError).flatMap(Self.reason)?.contains("`ImageSourcePolicy.remoteFetch`") == true
            }
        }
        #expect(stub.connections == 0)
    }

    @Test("with remote fetching on, the image is fetched (the control for the refusals)")
    func remoteAllowed() async throws {
        let stub = LoopbackStub([.respond(200, headers: ["Content-Type": "image/jpeg"], body: "image bytes")])
        defer { stub.stop() }
        let loader = Self.loader(ImageSourcePolicy(remoteFetch: Self.loopbackAllowed))
        #expect(try await loader.load(.url(stub.url("/a.jpg").absoluteString)) == Array("image bytes".utf8))
        #expect(stub.connections == 1)
    }

    @Test("the destination policy holds: loopback is refused under publicOnly, without connecting")
    func destinationPolicy() async throws {
        let stub = LoopbackStub([.respond(200, body: "image bytes")])
        defer { stub.stop() }
        let loader = Self.loader(ImageSourcePolicy(remoteFetch: .publicOnly))
        await #expect(throws: VisualSearchError.self) { try await loader.load(.url(stub.url("/a.jpg").absoluteString)) }
        #expect(stub.connections == 0)
    }

    @Test("a failed fetch names the URL without its secrets and never echoes the answer", arguments: [
        LoopbackStub.Step.respond(404, body: "TOP-SECRET-BODY"),
        .respond(500, body: "TOP-SECRET-BODY"),
        .oversized(bytes: 1 << 20),
    ])
    func failedFetch(step: LoopbackStub.Step) async throws {
        let stub = LoopbackStub([step])
        defer { stub.stop() }
        let loader = Self.loader(ImageSourcePolicy(remoteFetch: Self.loopbackAllowed, maxDownloadBytes: 4096))
        let url = "http://shop:hunter2@127.0.0.1:\(stub.port)/a.jpg?token=abc123"
        do {
            _ = try await loader.load(.url(url))
            Issue.record("the fetch succeeded")
        } catch {
            guard case .fetch(let named, _) = error else {
                Issue.record("\(error) is not a fetch error")
                return
            }
            #expect(named.contains("127.0.0.1"))
            for secret in ["hunter2", "abc123", "TOP-SECRET-BODY"] {
                #expect(!error.description.contains(secret) && !error.message.contains(secret), "\(secret) in \(error)")
            }
        }
    }

    @Test("other schemes are refused", arguments: ["ftp://images.example/a.jpg", "gopher://x/a", "data:image/jpeg;base64,AAAA", "https://", "javascript:alert(1)"])
    func schemes(url: String) async throws {
        await #expect {
            try await Self.loader(.commandLine).load(.url(url))
        } throws: { error in
            (error as? VisualSearchError).flatMap(Self.reason)?.contains("not an http(s) URL") == true
        }
    }
}
