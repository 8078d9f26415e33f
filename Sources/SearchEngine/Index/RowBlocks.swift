/// Rows of `width` values, kept in blocks of ``rowsPerBlock`` rows, each block
/// copied on write by itself: a copy of the whole (the snapshot a search in
/// flight still holds) shares every block, and a change to the copy then
/// copies only the blocks it touches. Appending a thousand rows to a
/// million-row index copies its last block, not the million rows — what makes
/// a catalog's changes visible without copying every vector (issue 40, item 4).
///
/// A collection of the values row after row, as one flat array of them would
/// be; the scans read rows through ``withRowAddresses(_:)`` instead.
public struct RowBlocks<Element: BitwiseCopyable & AdditiveArithmetic & Sendable>: Sendable, RandomAccessCollection, Equatable {
    /// Rows per block: 1,024 (half a megabyte of a 512-value `Int8` row block, 448 KB of a colour one).
    public static var rowsPerBlock: Int { 1 << blockShift }
    static var blockShift: Int { 10 }

    /// Values per row.
    public let width: Int
    /// The number of rows.
    public private(set) var rowCount = 0
    private var blocks: [Block] = []
    /// Rows ``reserveCapacity(rows:)`` announced: blocks for them are allocated whole at once.
    private var reservedRows = 0
    /// Rows a block starts with when no more were announced (a per-request index of a few rows):
    /// it doubles as rows come, up to ``rowsPerBlock``.
    static var smallestBlock: Int { 16 }

    /// No rows yet, `width` values each.
    public init(width: Int) {
        precondition(width > 0)
        self.width = width
    }

    /// The rows of `elements` (`width` values each, row after row).
    public init(width: Int, elements: [Element]) {
        precondition(width > 0 && elements.count % width == 0)
        self.width = width
        reserveCapacity(rows: elements.count / width)
        elements.withUnsafeBufferPointer { all in
            for row in 0..<(elements.count / width) {
                appendRow(copying: UnsafeBufferPointer(rebasing: all[(row * width)..<((row + 1) * width)]))
            }
        }
    }

    /// Rows read block by block: `fill` writes each block's values (`rows × width` of them) and
    /// returns whether it could; false stops and leaves nil.
    init?(width: Int, rows: Int, fill: (UnsafeMutableRawBufferPointer) -> Bool) {
        precondition(width > 0 && rows >= 0)
        self.width = width
        var row = 0
        while row < rows {
            let inBlock = Swift.min(Self.rowsPerBlock, rows - row)
            let block = Block(capacity: inBlock * width)
            guard fill(UnsafeMutableRawBufferPointer(start: block.base, count: inBlock * width * MemoryLayout<Element>.stride)) else { return nil }
            block.count = inBlock * width
            blocks.append(block)
            row += inBlock
        }
        rowCount = rows
    }

    // MARK: - Collection

    public var startIndex: Int { 0 }
    public var endIndex: Int { rowCount * width }

    /// A value by its place in the rows laid end to end.
    public subscript(position: Int) -> Element {
        precondition(position >= 0 && position < endIndex, "position \(position) outside \(endIndex) values")
        let perBlock = Self.rowsPerBlock * width
        return blocks[position / perBlock].base[position % perBlock]
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        guard lhs.width == rhs.width, lhs.rowCount == rhs.rowCount else { return false }
        for (a, b) in zip(lhs.blocks, rhs.blocks) where a !== b {
            guard UnsafeBufferPointer(start: a.base, count: a.count).elementsEqual(UnsafeBufferPointer(start: b.base, count: b.count)) else {
                return false
            }
        }
        return true
    }

    // MARK: - Rows

    /// Makes room for `rows` rows in all without growing the table of blocks.
    public mutating func reserveCapacity(rows: Int) {
        reservedRows = Swift.max(reservedRows, rows)
        blocks.reserveCapacity((rows + Self.rowsPerBlock - 1) >> Self.blockShift)
    }

    /// Rows the blocks have room for (filled or not): what the rows cost in memory, for tests.
    var allocatedRows: Int { blocks.reduce(0) { $0 + $1.capacity } / width }

    /// Appends a row of zeros and lets `fill` write it; returns what `fill` returns.
    @discardableResult
    public mutating func appendRow<R>(_ fill: (UnsafeMutableBufferPointer<Element>) -> R) -> R {
        if rowCount & (Self.rowsPerBlock - 1) == 0 {
            let rows = Swift.min(Self.rowsPerBlock, Swift.max(Self.smallestBlock, reservedRows - rowCount))
            blocks.append(Block(capacity: rows * width))
        } else {
            let last = blocks.count - 1
            let full = blocks[last].count == blocks[last].capacity
            if full || !isKnownUniquelyReferenced(&blocks[last]) {
                // Shared: copied (with room for the rest of the block); full below a whole block: doubled.
                let capacity = full ? Swift.min(Self.rowsPerBlock * width, blocks[last].capacity * 2) : blocks[last].capacity
                blocks[last] = blocks[last].copy(capacity: capacity)
            }
        }
        let block = blocks[blocks.count - 1]
        let row = UnsafeMutableBufferPointer(start: block.base + block.count, count: width)
        row.initialize(repeating: .zero)
        block.count += width
        rowCount += 1
        return fill(row)
    }

    /// Appends a copy of `row` (`width` values).
    public mutating func appendRow(copying row: UnsafeBufferPointer<Element>) {
        precondition(row.count == width)
        appendRow { _ = $0.update(fromContentsOf: row) }
    }

    /// Lets `body` read a row.
    public func withRow<R>(_ row: Int, _ body: (UnsafeBufferPointer<Element>) -> R) -> R {
        precondition(row >= 0 && row < rowCount, "row \(row) outside \(rowCount)")
        let block = blocks[row >> Self.blockShift]
        return withExtendedLifetime(block) {
            body(UnsafeBufferPointer(start: block.base + (row & (Self.rowsPerBlock - 1)) * width, count: width))
        }
    }

    /// Lets `body` change a row (its block copied first when another copy of the rows shares it).
    public mutating func withMutableRow<R>(_ row: Int, _ body: (UnsafeMutableBufferPointer<Element>) -> R) -> R {
        precondition(row >= 0 && row < rowCount, "row \(row) outside \(rowCount)")
        let index = row >> Self.blockShift
        if !isKnownUniquelyReferenced(&blocks[index]) { blocks[index] = blocks[index].copy(capacity: blocks[index].capacity) }
        let block = blocks[index]
        return body(UnsafeMutableBufferPointer(start: block.base + (row & (Self.rowsPerBlock - 1)) * width, count: width))
    }

    /// Lets `body` read any row by its address (``RowAddresses``), valid while `body` runs: what the scans
    /// use (it builds a table of the blocks' addresses: for one or two rows, ``withRow(_:_:)``).
    public func withRowAddresses<R>(_ body: (RowAddresses) -> R) -> R {
        let starts = blocks.map { UnsafePointer($0.base) }
        return withExtendedLifetime(blocks) {
            starts.withUnsafeBufferPointer { body(RowAddresses(starts: $0, width: width, rows: rowCount)) }
        }
    }

    /// Each block's values in row order, with the row the block starts at.
    public func forEachBlock(_ body: (_ firstRow: Int, _ values: UnsafeBufferPointer<Element>) -> Void) {
        for (index, block) in blocks.enumerated() {
            withExtendedLifetime(block) { body(index << Self.blockShift, UnsafeBufferPointer(start: block.base, count: block.count)) }
        }
    }

    /// The rows `kept`, in that order.
    public func keeping(_ kept: [Int]) -> RowBlocks {
        var result = RowBlocks(width: width)
        result.reserveCapacity(rows: kept.count)
        withRowAddresses { rows in
            for row in kept { result.appendRow(copying: UnsafeBufferPointer(start: rows[row], count: width)) }
        }
        return result
    }

    /// How many blocks hold the rows.
    var blockCount: Int { blocks.count }

    /// How many blocks this and `other` share (the same memory, not copied): what a change copied, for tests.
    func blocksShared(with other: RowBlocks) -> Int {
        zip(blocks, other.blocks).reduce(0) { $0 + ($1.0 === $1.1 ? 1 : 0) }
    }

    /// Where each row starts, while ``withRowAddresses(_:)``'s body runs.
    public struct RowAddresses {
        let starts: UnsafeBufferPointer<UnsafePointer<Element>>
        /// Values per row.
        public let width: Int
        /// The number of rows.
        public let rows: Int

        /// The first value of `row`.
        @inline(__always)
        public subscript(row: Int) -> UnsafePointer<Element> {
            assert(row >= 0 && row < rows, "row \(row) outside \(rows)")
            return starts[row >> RowBlocks.blockShift] + (row & (RowBlocks.rowsPerBlock - 1)) * width
        }
    }

    /// One block's values (room for up to ``rowsPerBlock`` rows), filled row by row; changed only
    /// while one ``RowBlocks`` holds it (copied on write), so shared blocks are only read.
    final class Block: @unchecked Sendable {
        let base: UnsafeMutablePointer<Element>
        let capacity: Int
        var count = 0

        init(capacity: Int) {
            self.capacity = capacity
            base = .allocate(capacity: capacity)
        }

        deinit { base.deallocate() }

        /// A copy with room for `capacity` values (at least those it holds).
        func copy(capacity: Int) -> Block {
            precondition(capacity >= count)
            let copy = Block(capacity: capacity)
            copy.base.initialize(from: base, count: count)
            copy.count = count
            return copy
        }
    }
}
