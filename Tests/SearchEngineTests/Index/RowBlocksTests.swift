@testable import SearchEngine
import TestSupport
import Testing

@Suite("RowBlocks", .timeLimit(.minutes(10)))
struct RowBlocksTests {
    static let width = 5
    static let perBlock = RowBlocks<Float>.rowsPerBlock

    /// Rows whose values say where they are: row r holds r·10 + column.
    static func rows(_ count: Int) -> [Float] {
        (0..<(count * width)).map { Float($0 / width * 10 + $0 % width) }
    }

    @Test("rows read back as the flat array they were made from, across block boundaries")
    func flatArray() {
        for count in [0, 1, Self.perBlock - 1, Self.perBlock, Self.perBlock + 1, 2 * Self.perBlock + 3] {
            let flat = Self.rows(count)
            let blocks = RowBlocks<Float>(width: Self.width, elements: flat)
            #expect(blocks.rowCount == count && blocks.count == flat.count)
            #expect(Array(blocks) == flat, "\(count) rows")
            #expect(blocks.blockCount == (count + Self.perBlock - 1) / Self.perBlock)
            var appended = RowBlocks<Float>(width: Self.width)
            for row in 0..<count { flat.withUnsafeBufferPointer { appended.appendRow(copying: UnsafeBufferPointer(rebasing: $0[(row * Self.width)..<((row + 1) * Self.width)])) } }
            #expect(appended == blocks)
            var seen: [Float] = []
            var firsts: [Int] = []
            blocks.forEachBlock { first, values in firsts.append(first); seen += values }
            #expect(seen == flat && firsts == Array(stride(from: 0, to: count, by: Self.perBlock)))
            blocks.withRowAddresses { rows in
                for row in [0, count / 2, count - 1] where count > 0 {
                    #expect(Array(UnsafeBufferPointer(start: rows[row], count: Self.width)) == Array(flat[(row * Self.width)..<((row + 1) * Self.width)]))
                    #expect(blocks.withRow(row) { Array($0) } == Array(flat[(row * Self.width)..<((row + 1) * Self.width)]))
                }
            }
        }
    }

    @Test("a copy shares every block; appending to it copies only the last block, and the original is unchanged")
    func appendCopiesLastBlock() {
        let count = 3 * Self.perBlock + 10
        let original = RowBlocks(width: Self.width, elements: Self.rows(count))
        var changed = original
        #expect(changed.blocksShared(with: original) == 4)
        for _ in 0..<5 { changed.appendRow { $0.update(repeating: -1) } }
        #expect(changed.blocksShared(with: original) == 3, "the three full blocks stay shared")
        #expect(original.rowCount == count && Array(original) == Self.rows(count))
        #expect(changed.rowCount == count + 5 && changed.withRow(count + 4) { Array($0) } == [Float](repeating: -1, count: Self.width))
        // Appending past a block boundary starts a new block of its own.
        var full = RowBlocks(width: Self.width, elements: Self.rows(2 * Self.perBlock))
        let before = full
        full.appendRow { $0.update(repeating: 7) }
        #expect(full.blockCount == 3 && full.blocksShared(with: before) == 2)
    }

    @Test("changing a row copies only its block; the copy it was made from still reads the old row")
    func changeCopiesOneBlock() {
        let count = 4 * Self.perBlock
        let original = RowBlocks(width: Self.width, elements: Self.rows(count))
        var changed = original
        let row = 2 * Self.perBlock + 17
        changed.withMutableRow(row) { $0.update(repeating: 0.5) }
        #expect(changed.blocksShared(with: original) == 3)
        #expect(original.withRow(row) { Array($0) } == Array(Self.rows(count)[(row * Self.width)..<((row + 1) * Self.width)]))
        #expect(changed.withRow(row) { Array($0) } == [Float](repeating: 0.5, count: Self.width))
        #expect(changed != original)
        // A second change to the same block, now its own, copies nothing more.
        changed.withMutableRow(row + 1) { $0.update(repeating: 0.25) }
        #expect(changed.blocksShared(with: original) == 3)
    }

    @Test("keeping rows gives them in the order asked, and equality compares values, not blocks")
    func keepingAndEquality() {
        let count = Self.perBlock + 40
        let blocks = RowBlocks(width: Self.width, elements: Self.rows(count))
        let kept = [count - 1, 0, Self.perBlock, 3]
        let flat = Self.rows(count)
        #expect(Array(blocks.keeping(kept)) == kept.flatMap { Array(flat[($0 * Self.width)..<(($0 + 1) * Self.width)]) })
        #expect(RowBlocks(width: Self.width, elements: flat) == blocks)
        #expect(RowBlocks(width: Self.width, elements: Array(flat.dropLast(Self.width))) != blocks)
        #expect(RowBlocks(width: 1, elements: flat) != blocks, "another width")
    }

    @Test("a few rows take a small block that doubles as rows come; rows announced are allocated whole")
    func blockSizes() {
        var few = RowBlocks<Float>(width: Self.width)
        for row in 0..<3 { few.appendRow { $0.update(repeating: Float(row)) } }
        #expect(few.allocatedRows == RowBlocks<Float>.smallestBlock)
        for row in 3..<40 { few.appendRow { $0.update(repeating: Float(row)) } }
        #expect(few.allocatedRows == 64 && few.rowCount == 40)
        #expect((0..<40).allSatisfy { row in few.withRow(row) { $0.allSatisfy { $0 == Float(row) } } }, "rows survive the doubling")
        var announced = RowBlocks<Float>(width: Self.width)
        announced.reserveCapacity(rows: Self.perBlock + 100)
        for _ in 0..<(Self.perBlock + 1) { announced.appendRow { $0.update(repeating: 1) } }
        #expect(announced.allocatedRows == Self.perBlock + 100, "one whole block, then the 100 rows left")
        #expect(RowBlocks(width: Self.width, elements: Self.rows(Self.perBlock + 3)).allocatedRows == Self.perBlock + RowBlocks<Float>.smallestBlock,
                "a whole block, then the smallest one for the 3 left")
    }
}
