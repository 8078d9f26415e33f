import Foundation
import Testing
@testable import ImageOps

/// `--shard i/n`: a stable split of a job's files that covers every file exactly once.
@Suite("Shard")
struct ShardTests {
    @Test("the hash is FNV-1a 64 of the UTF-8 path, pinned so shards agree across machines and versions")
    func pinnedHash() {
        #expect(Shard.hash("") == 0xcbf2_9ce4_8422_2325)
        #expect(Shard.hash("a") == 0xaf63_dc4c_8601_ec8c)
        #expect(Shard.hash("shoes/red.jpg") == Shard.hash("shoes/red.jpg"))
        #expect(Shard.hash("shoes/red.jpg") != Shard.hash("shoes/red.png"))
    }

    @Test("every path falls in exactly one of n parts, and the parts are roughly even", arguments: [1, 2, 3, 7])
    func partition(count: Int) throws {
        let paths = (0..<3000).map { "folder\($0 % 17)/image-\($0).jpg" }
        let shards = try (0..<count).map { try Shard(index: $0, count: count) }
        for path in paths {
            #expect(shards.filter { $0.contains(path) }.count == 1, "\(path)")
        }
        let sizes = shards.map { shard in paths.filter(shard.contains).count }
        #expect(sizes.min()! > paths.count / count * 8 / 10, "\(sizes)")
    }

    @Test("i/n parses; anything else is an invalid shard parameter saying what is expected",
          arguments: ["3/3", "-1/2", "0/0", "1", "a/b", "1/2/3", ""])
    func parsing(text: String) throws {
        #expect(try Shard(parsing: "2/3") == Shard(index: 2, count: 3))
        #expect(try Shard(parsing: " 0 / 1 ") == .whole)
        #expect(throws: ImageOpsError.self) { try Shard(parsing: text) }
    }
}
