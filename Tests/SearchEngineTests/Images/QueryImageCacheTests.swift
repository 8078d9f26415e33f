import Foundation
import SearchEngine
import TestSupport
import Testing
import VisualSearch

@Suite("QueryImageCache", .timeLimit(.minutes(10)))
struct QueryImageCacheTests {
    static func blob(_ index: Int, size: Int = 300) -> [UInt8] {
        (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index &* 7 &+ index) } + [UInt8(index)]
    }

    /// Sets a file's modification time, so "oldest" needs no waiting.
    static func age(_ cache: QueryImageCache, _ id: String, secondsAgo: Double) throws {
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-secondsAgo)],
                                              ofItemAtPath: cache.directory + "/" + id)
    }

    static func cached(_ cache: QueryImageCache, _ ids: [String]) -> [String] {
        ids.filter { FileManager.default.fileExists(atPath: cache.directory + "/" + $0) }
    }

    @Test("stored bytes load back under their id; the same bytes get the same id; the folder is made on demand")
    func roundTrip() throws {
        let cache = QueryImageCache(directory: Repository.temporaryDirectory("cache") + "/nested/query-cache")
        let id = cache.store(Self.blob(1))
        #expect(id.count == 36 && id.hasSuffix(".jpg"))
        #expect(id == ContentHash.of(Self.blob(1)) + ".jpg")
        #expect(try cache.load(id) == Self.blob(1))
        #expect(cache.store(Self.blob(1)) == id)
        #expect(cache.store(Self.blob(2)) != id)
        #expect(try cache.load(cache.store(Self.blob(2))) == Self.blob(2))
    }

    @Test("malformed ids are refused before touching the disk", arguments: [
        "", "abc.jpg", "../../../../etc/passwd", "/etc/passwd", String(repeating: "g", count: 32) + ".jpg",
        String(repeating: "0", count: 32) + ".png", String(repeating: "0", count: 31) + "/.jpg", String(repeating: "0", count: 33) + ".jpg",
        "..%2F..%2Fetc%2Fpasswd.jpg",
    ])
    func malformed(id: String) {
        let cache = QueryImageCache(directory: Repository.temporaryDirectory("cache"))
        #expect {
            try cache.load(id)
        } throws: { error in
            guard case VisualSearchError.invalidParameter(let name, let reason) = error else { return false }
            return name == "im_id" && reason.contains("not an im_id")
        }
    }

    @Test("an unknown well-formed id asks for the image again")
    func unknown() {
        let cache = QueryImageCache(directory: Repository.temporaryDirectory("cache"))
        #expect {
            try cache.load(String(repeating: "a", count: 32) + ".jpg")
        } throws: { error in
            guard case VisualSearchError.invalidParameter("im_id", let reason) = error else { return false }
            return reason.contains("upload the image again")
        }
    }

    @Test("over maxFiles, a sweep evicts the oldest images down to 90%, keeping the most recent")
    func fileCap() throws {
        let cache = QueryImageCache(directory: Repository.temporaryDirectory("cache"), maxBytes: 1 << 30, maxFiles: 5)
        let ids = (0..<6).map { cache.store(Self.blob($0)) }
        for (index, id) in ids.enumerated() { try Self.age(cache, id, secondsAgo: Double(1000 - index * 100)) }
        cache.sweep()
        // 6 > 5: evict the oldest until at most 4 (90% of 5) remain.
        #expect(Self.cached(cache, ids) == Array(ids[2...]))
        #expect(throws: VisualSearchError.self) { try cache.load(ids[0]) }
        #expect(try cache.load(ids[5]) == Self.blob(5))
    }

    @Test("over maxBytes, a sweep evicts the oldest images down to 90% of the bytes")
    func byteCap() throws {
        let cache = QueryImageCache(directory: Repository.temporaryDirectory("cache"), maxBytes: 1000, maxFiles: 100)
        let ids = (0..<5).map { cache.store(Self.blob($0, size: 299)) }  // 300 bytes each, 1500 in all
        for (index, id) in ids.enumerated() { try Self.age(cache, id, secondsAgo: Double(1000 - index * 100)) }
        cache.sweep()
        #expect(Self.cached(cache, ids) == Array(ids[2...]))  // 900 ≤ 900
    }

    @Test("storing an image again makes it recent, so it outlives older ones")
    func refresh() throws {
        let cache = QueryImageCache(directory: Repository.temporaryDirectory("cache"), maxBytes: 1 << 30, maxFiles: 3)
        let ids = (0..<4).map { cache.store(Self.blob($0)) }
        for (index, id) in ids.enumerated() { try Self.age(cache, id, secondsAgo: Double(1000 - index * 100)) }
        #expect(cache.store(Self.blob(0)) == ids[0])  // the oldest, used again
        cache.sweep()
        // 4 > 3: down to 2 (90% of 3, rounded down): the refreshed one and the newest.
        #expect(Set(Self.cached(cache, ids)) == [ids[0], ids[3]])
    }

    @Test("a sweep under both bounds evicts nothing, and ignores files that are not cached images")
    func underBounds() throws {
        let cache = QueryImageCache(directory: Repository.temporaryDirectory("cache"), maxBytes: 1 << 20, maxFiles: 3)
        let ids = (0..<3).map { cache.store(Self.blob($0)) }
        #expect(FileManager.default.createFile(atPath: cache.directory + "/notes.txt", contents: Data(repeating: 1, count: 4 << 20)))
        cache.sweep()
        #expect(Self.cached(cache, ids) == ids)
        #expect(FileManager.default.fileExists(atPath: cache.directory + "/notes.txt"))
    }

    @Test("a cache that cannot be written still returns an id; loading it asks for the image again")
    func unwritable() throws {
        let file = Repository.temporaryDirectory("cache") + "/not-a-folder"
        #expect(FileManager.default.createFile(atPath: file, contents: Data()))
        let cache = QueryImageCache(directory: file)
        let id = cache.store(Self.blob(1))
        #expect(id == ContentHash.of(Self.blob(1)) + ".jpg")
        #expect(throws: VisualSearchError.self) { try cache.load(id) }
    }

    @Test("the defaults: 256 MiB and 10,000 images")
    func defaults() {
        let cache = QueryImageCache(directory: "/nonexistent")
        #expect(cache.maxBytes == 256 << 20 && cache.maxFiles == 10_000)
    }
}
