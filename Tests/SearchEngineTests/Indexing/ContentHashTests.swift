import SearchEngine
import TestSupport
import Testing

@Suite("ContentHash", .timeLimit(.minutes(10)))
struct ContentHashTests {
    @Test("32 lower-case hex digits, the FNV-1a 128 offset basis for no bytes")
    func format() {
        #expect(ContentHash.of([]) == "6c62272e07bb014262b821756295c58d")
        let hash = ContentHash.of(Repository.bytes("astronaut.jpg"))
        #expect(hash.count == 32 && hash.allSatisfy { $0.isHexDigit && !$0.isUppercase })
        // FNV-1a 128 as specified (offset basis, prime 2^88 + 0x13B), computed independently:
        // catalogs store these hashes, so the value may never change.
        #expect(ContentHash.of(Array("vsearch, 0123456789 abcdefghij".utf8)) == "58d7696c12c68b2e503a93e329969e99")
        #expect(hash == "69f3906044d4de7074616f41938b22df")
    }

    @Test("equal bytes hash equally; any one changed byte changes the hash")
    func sensitivity() {
        var random = TestSeed("ContentHashTests.sensitivity")
        let bytes = (0..<4096).map { _ in UInt8.random(in: 0...255, using: &random) }
        let hash = ContentHash.of(bytes)
        #expect(ContentHash.of(bytes) == hash)
        var seen: [String: [UInt8]] = [hash: bytes]
        for _ in 0..<200 {
            var changed = bytes
            let index = Int.random(in: 0..<bytes.count, using: &random)
            changed[index] ^= UInt8.random(in: 1...255, using: &random)
            // The same change may be drawn twice; a hash shared by two different byte strings may not.
            let earlier = seen.updateValue(changed, forKey: ContentHash.of(changed))
            #expect(earlier == nil || earlier == changed, "seed \(random.seed)")
        }
        #expect(ContentHash.of(bytes + [0]) != hash)
    }
}
