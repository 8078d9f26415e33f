import Foundation

/// A byte string to find in a buffer in time linear in the buffer, whatever
/// the pattern and whatever the buffer holds: Knuth–Morris–Pratt, with
/// `memchr` skipping ahead to the pattern's first byte whenever no partial
/// match is open (so a body with few candidates is scanned at memory speed).
///
/// A naive search compares up to the pattern's length at every position: a
/// multipart body full of near-matches of a long boundary (`-----…-X`) cost
/// its length times the boundary's (issue 37: 16 MB, 0.87 s). Here each byte
/// is passed once by `memchr` or compared at most twice — a matched byte
/// moves the search forward, a mismatch falls back along the pattern's own
/// borders, never back in the buffer. Every byte is consumed once (passed by
/// `memchr` or matched) and every mismatch undoes an earlier step forward, so
/// a search looks at most 2 × (bytes searched) times — what
/// ``firstIndex(in:from:examined:)`` counts.
///
/// ```swift
/// let delimiter = BytePattern(Array("\r\n--boundary".utf8))
/// var examined = 0
/// let next = body.withUnsafeBufferPointer { delimiter.firstIndex(in: $0, from: 0, examined: &examined) }
/// ```
struct BytePattern: Sendable {
    /// The bytes searched for; never empty.
    let bytes: [UInt8]
    /// For each prefix length `q` (1…count), the length of its longest proper
    /// border (a prefix that is also a suffix): where a partial match of `q`
    /// bytes resumes after a mismatch.
    let borders: [Int]

    /// - Precondition: `bytes` is not empty.
    init(_ bytes: [UInt8]) {
        precondition(!bytes.isEmpty, "a pattern has at least one byte")
        self.bytes = bytes
        var borders = [Int](repeating: 0, count: bytes.count)
        var length = 0
        for index in 1..<max(1, bytes.count) {
            while length > 0 && bytes[index] != bytes[length] { length = borders[length - 1] }
            if bytes[index] == bytes[length] { length += 1 }
            borders[index] = length
        }
        self.borders = borders
    }

    /// The first index at or after `start` where the pattern occurs in `buffer`, or nil.
    /// - Parameter examined: increased by the bytes this search looked at —
    ///   each byte `memchr` passed over and each comparison — at most
    ///   2 × (`buffer.count` − `start`).
    func firstIndex(in buffer: UnsafeBufferPointer<UInt8>, from start: Int, examined: inout Int) -> Int? {
        guard let base = buffer.baseAddress, start >= 0 else { return nil }
        let count = buffer.count, first = bytes[0], length = bytes.count
        var index = start, matched = 0
        while index < count {
            if matched == 0 {
                // No partial match open: jump to the next candidate first byte.
                guard let found = memchr(base + index, Int32(first), count - index) else {
                    examined += count - index
                    return nil
                }
                let position = UnsafeRawPointer(found) - UnsafeRawPointer(base)
                examined += position - index + 1
                index = position + 1
                matched = 1
            } else {
                examined += 1
                if buffer[index] == bytes[matched] {
                    matched += 1
                    index += 1
                } else {
                    // Fall back along the borders; at 0, memchr resumes at this very byte.
                    matched = borders[matched - 1]
                    continue
                }
            }
            if matched == length { return index - length }
        }
        return nil
    }

    /// ``firstIndex(in:from:examined:)`` over an array.
    func firstIndex(in buffer: [UInt8], from start: Int, examined: inout Int) -> Int? {
        buffer.withUnsafeBufferPointer { firstIndex(in: $0, from: start, examined: &examined) }
    }
}
