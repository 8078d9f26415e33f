import CHNSWIndex
import Foundation

/// A ``FeatureIndex`` as one file (``VectorFiles``): every row's id, name,
/// source, palette and vectors — the learned ones in their `Int8` form with
/// their inverse lengths — section after section, as the process holds them.
///
///     magic "VSVECT01"
///     header   8 × UInt64: rows, colour floats per row, learned values per row (0: none),
///              palette entries in all, name bytes, source bytes, 0, 0
///     ids      rows × Int64
///     colour   rows × floats Float
///     learned  rows × values Int8, then rows × Float (inverse lengths)   (when the header says so)
///     palettes rows × UInt32 (entries per row), then entries × 4 Float (L, a, b, fraction)
///     names    rows × UInt64 (each name's end), then the UTF-8 bytes
///     sources  rows × UInt64 (each source's end), then the UTF-8 bytes
///
/// Native byte order (little-endian: the magic would read otherwise), no
/// padding. A reader checks that the header's sizes add up to the file's
/// size — which the manifest records, with the file's CRC-32 — before it
/// sizes anything, and that every end offset stays in its bytes.
enum FeatureIndexFile {
    static let magic = Array("VSVECT01".utf8)
    static let headerWords = 8

    struct Header: Equatable {
        var rows: Int
        var dimensions: Int
        var learnedDimensions: Int
        var paletteEntries: Int
        var nameBytes: Int
        var sourceBytes: Int

        /// The file's size these counts make.
        var fileBytes: Int? {
            let parts: [(Int, Int)] = [
                (rows, 8), (rows * dimensions, 4), (rows * learnedDimensions, 1), (learnedDimensions > 0 ? rows : 0, 4),
                (rows, 4), (paletteEntries * 4, 4), (rows, 8), (nameBytes, 1), (rows, 8), (sourceBytes, 1),
            ]
            var total = magic.count + headerWords * 8
            for (count, size) in parts {
                guard count >= 0 else { return nil }
                let (bytes, overflow) = count.multipliedReportingOverflow(by: size)
                guard !overflow else { return nil }
                let (sum, over) = total.addingReportingOverflow(bytes)
                guard !over else { return nil }
                total = sum
            }
            return total
        }
    }

    /// Writes `index` to the open file `descriptor` and fsyncs it; returns the bytes written and their CRC-32.
    static func write(_ index: FeatureIndex, to descriptor: Int32, path: String) throws(VectorFilesError) -> (bytes: UInt64, crc: UInt32) {
        var writer = Writer(descriptor: descriptor, path: path)
        let learnedDimensions = index.learned?.dimensions ?? 0
        let entries = index.palettes.reduce(0) { $0 + $1.entries.count }
        var nameEnds: [UInt64] = [], sourceEnds: [UInt64] = []
        nameEnds.reserveCapacity(index.count)
        sourceEnds.reserveCapacity(index.count)
        var nameBytes: UInt64 = 0, sourceBytes: UInt64 = 0
        for row in 0..<index.count {
            nameBytes += UInt64(index.names[row].utf8.count)
            nameEnds.append(nameBytes)
            sourceBytes += UInt64(index.sources[row].utf8.count)
            sourceEnds.append(sourceBytes)
        }
        try writer.bytes(magic)
        try writer.array([UInt64(index.count), UInt64(index.dimensions), UInt64(learnedDimensions), UInt64(entries),
                          nameBytes, sourceBytes, 0, 0])
        try writer.array(index.ids)
        try writer.rows(index.vectors)
        if let learned = index.learned {
            try writer.rows(learned.values)
            try writer.array(learned.inverseNorms)
        }
        try writer.array(index.palettes.map { UInt32($0.entries.count) })
        var flat: [Float] = []
        flat.reserveCapacity(entries * 4)
        for palette in index.palettes {
            for entry in palette.entries { flat.append(contentsOf: [entry.color.l, entry.color.a, entry.color.b, entry.fraction]) }
        }
        try writer.array(flat)
        try writer.array(nameEnds)
        try writer.strings(index.names)
        try writer.array(sourceEnds)
        try writer.strings(index.sources)
        try writer.flush()
        guard fsync(descriptor) == 0 else { throw VectorFilesError(.io, "cannot write \(path): \(String(cString: strerror(errno)))") }
        return (writer.written, writer.crc)
    }

    /// Reads an index written by ``write(_:to:path:)``, refusing a file whose size is not `bytes`, whose
    /// CRC-32 is not `crc`, or whose sections do not hold together.
    static func read(_ path: String, bytes: UInt64, crc: UInt32) throws(VectorFilesError) -> FeatureIndex {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw VectorFilesError(.io, "cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw VectorFilesError(.io, "cannot read \(path): \(String(cString: strerror(errno)))") }
        guard UInt64(status.st_size) == bytes else {
            throw VectorFilesError(.damaged, "\(path) holds \(status.st_size) bytes, its manifest records \(bytes)")
        }
        var reader = Reader(descriptor: descriptor, path: path)
        guard try reader.array(UInt8.self, count: magic.count) == magic else { throw VectorFilesError(.damaged, "\(path) is not a saved index") }
        let words = try reader.array(UInt64.self, count: headerWords)
        guard words.allSatisfy({ $0 <= UInt64(Int.max / 8) }) else { throw VectorFilesError(.damaged, "\(path): its header is damaged") }
        let header = Header(rows: Int(words[0]), dimensions: Int(words[1]), learnedDimensions: Int(words[2]),
                            paletteEntries: Int(words[3]), nameBytes: Int(words[4]), sourceBytes: Int(words[5]))
        guard header.dimensions > 0, header.fileBytes == Int(bytes) else {
            throw VectorFilesError(.damaged, "\(path): its header's sizes do not add up to its \(bytes) bytes")
        }
        let rows = header.rows
        let ids = try reader.array(Int64.self, count: rows)
        let vectors = try reader.rows(Float.self, width: header.dimensions, count: rows)
        var learned: QuantizedMatrix?
        if header.learnedDimensions > 0 {
            let values = try reader.rows(Int8.self, width: header.learnedDimensions, count: rows)
            let inverseNorms = try reader.array(Float.self, count: rows)
            learned = QuantizedMatrix(dimensions: header.learnedDimensions, values: values, inverseNorms: inverseNorms)
        }
        let entryCounts = try reader.array(UInt32.self, count: rows)
        let flat = try reader.array(Float.self, count: header.paletteEntries * 4)
        guard entryCounts.reduce(0, { $0 + Int($1) }) == header.paletteEntries else {
            throw VectorFilesError(.damaged, "\(path): its palettes do not add up")
        }
        var palettes: [DominantColors] = []
        palettes.reserveCapacity(rows)
        var at = 0
        for count in entryCounts {
            var entries: [DominantColors.Entry] = []
            entries.reserveCapacity(Int(count))
            for _ in 0..<Int(count) {
                entries.append(DominantColors.Entry(color: LabColor(l: flat[at], a: flat[at + 1], b: flat[at + 2]), fraction: flat[at + 3]))
                at += 4
            }
            palettes.append(DominantColors(entries: entries))
        }
        let names = try reader.strings(rows: rows, bytes: header.nameBytes)
        let sources = try reader.strings(rows: rows, bytes: header.sourceBytes)
        guard reader.crc == crc else { throw VectorFilesError(.damaged, "\(path) fails its checksum") }
        return FeatureIndex(dimensions: header.dimensions, ids: ids, names: names, sources: sources, palettes: palettes,
                            vectors: vectors, learned: learned)
    }

    /// Buffered writes that keep a running CRC-32.
    struct Writer {
        let descriptor: Int32
        let path: String
        var buffer: [UInt8] = []
        var written: UInt64 = 0
        var crc: UInt32 = 0
        static let chunk = 1 << 20

        init(descriptor: Int32, path: String) {
            self.descriptor = descriptor
            self.path = path
            buffer.reserveCapacity(Self.chunk)
        }

        mutating func bytes(_ raw: UnsafeRawBufferPointer) throws(VectorFilesError) {
            if raw.count >= Self.chunk {
                try flush()
                try direct(raw)
                return
            }
            if buffer.count + raw.count > Self.chunk { try flush() }
            buffer.append(contentsOf: raw)
        }

        mutating func bytes(_ array: [UInt8]) throws(VectorFilesError) {
            try self.array(array)
        }

        /// The stdlib's `withUnsafeBytes` rethrows untyped: the failure is carried out by hand.
        mutating func array<T>(_ array: [T]) throws(VectorFilesError) {
            var failure: VectorFilesError?
            array.withUnsafeBytes { raw in
                do throws(VectorFilesError) { try bytes(raw) } catch { failure = error }
            }
            if let failure { throw failure }
        }

        /// Rows block by block: the same bytes as one array of them.
        mutating func rows<T: BitwiseCopyable & AdditiveArithmetic & Sendable>(_ rows: RowBlocks<T>) throws(VectorFilesError) {
            var failure: VectorFilesError?
            rows.forEachBlock { _, block in
                guard failure == nil else { return }
                do throws(VectorFilesError) { try bytes(UnsafeRawBufferPointer(block)) } catch { failure = error }
            }
            if let failure { throw failure }
        }

        mutating func strings(_ strings: [String]) throws(VectorFilesError) {
            var failure: VectorFilesError?
            for string in strings {
                var string = string
                string.withUTF8 { utf8 in
                    do throws(VectorFilesError) { try bytes(UnsafeRawBufferPointer(utf8)) } catch { failure = error }
                }
                if let failure { throw failure }
            }
        }

        mutating func flush() throws(VectorFilesError) {
            let pending = buffer
            buffer.removeAll(keepingCapacity: true)
            var failure: VectorFilesError?
            pending.withUnsafeBytes { raw in
                do throws(VectorFilesError) { try direct(raw) } catch { failure = error }
            }
            if let failure { throw failure }
        }

        mutating func direct(_ raw: UnsafeRawBufferPointer) throws(VectorFilesError) {
            guard let base = raw.baseAddress, raw.count > 0 else { return }
            crc = vshnsw_crc32(crc, base, raw.count)
            var offset = 0
            while offset < raw.count {
                let count = Glibc.write(descriptor, base + offset, raw.count - offset)
                if count < 0 {
                    if errno == EINTR { continue }
                    throw VectorFilesError(.io, "cannot write \(path): \(String(cString: strerror(errno)))")
                }
                offset += count
            }
            written += UInt64(raw.count)
        }
    }

    /// Reads straight into arrays, keeping a running CRC-32.
    struct Reader {
        let descriptor: Int32
        let path: String
        var crc: UInt32 = 0

        init(descriptor: Int32, path: String) {
            self.descriptor = descriptor
            self.path = path
        }

        mutating func array<T: BitwiseCopyable>(_ type: T.Type, count: Int) throws(VectorFilesError) -> [T] {
            guard count > 0 else { return [] }  // never the empty buffer: its initializer writes the shared empty storage (docs/fuzzing.md, TSan)
            var failure: VectorFilesError?
            let array = [T](unsafeUninitializedCapacity: count) { buffer, initialized in
                failure = fill(UnsafeMutableRawBufferPointer(buffer))
                initialized = failure == nil ? count : 0
            }
            if let failure { throw failure }
            return array
        }

        /// `count` rows of `width` values, read straight into their blocks.
        mutating func rows<T: BitwiseCopyable & AdditiveArithmetic & Sendable>(_ type: T.Type, width: Int, count: Int) throws(VectorFilesError) -> RowBlocks<T> {
            var failure: VectorFilesError?
            let rows = RowBlocks<T>(width: width, rows: count) { raw in
                failure = fill(raw)
                return failure == nil
            }
            guard let rows else { throw failure ?? VectorFilesError(.io, "cannot read \(path)") }
            return rows
        }

        /// Fills `raw` from the file, adding it to the running CRC-32; the failure, if any.
        mutating func fill(_ raw: UnsafeMutableRawBufferPointer) -> VectorFilesError? {
            var offset = 0
            while offset < raw.count {
                let got = Glibc.read(descriptor, raw.baseAddress! + offset, raw.count - offset)
                if got < 0 && errno == EINTR { continue }
                guard got > 0 else {
                    return VectorFilesError(got == 0 ? .damaged : .io, got == 0 ? "\(path) ends early"
                                            : "cannot read \(path): \(String(cString: strerror(errno)))")
                }
                offset += got
            }
            if raw.count > 0 { crc = vshnsw_crc32(crc, raw.baseAddress, raw.count) }
            return nil
        }

        /// `rows` strings: their end offsets, then their bytes (checked to be whole UTF-8 at each end).
        mutating func strings(rows: Int, bytes: Int) throws(VectorFilesError) -> [String] {
            let ends = try array(UInt64.self, count: rows)
            let text = try array(UInt8.self, count: bytes)
            var strings: [String] = []
            strings.reserveCapacity(rows)
            var start = 0
            for end in ends {
                guard end >= UInt64(start), end <= UInt64(bytes) else { throw VectorFilesError(.damaged, "\(path): its strings are damaged") }
                let string = text.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[start..<Int(end)]), as: UTF8.self) }
                strings.append(string)
                start = Int(end)
            }
            guard start == bytes else { throw VectorFilesError(.damaged, "\(path): its strings are damaged") }
            return strings
        }
    }
}
