import CHNSWIndex

/// One HNSW graph over one vector space: hnswlib's, through CHNSWIndex's C
/// interface. It holds each vector rounded to `Int8` (with its inverse
/// length) and finds a query's likely nearest by cosine; it only chooses
/// candidates, which the engine then scores exactly (``ApproximateIndex``).
///
/// Labels are catalog ids. Searches may run concurrently with each other
/// and with one writer; writers (add, remove, save) wait for each other —
/// the C side's locks, so the class is `Sendable`.
public final class HNSWGraph: @unchecked Sendable {
    /// Links per node (twice that on the bottom layer): hnswlib's and faiss's usual 16.
    public static let linksPerNode = 16
    /// Candidates kept while linking a new node (faiss's benchmark setting in bench/scale.py).
    public static let efConstruction = 128

    let handle: OpaquePointer
    /// Floats per vector.
    public let dimensions: Int

    /// What the graph holds for a label, against a vector.
    public enum Presence: Sendable, Equatable {
        case absent, same, different, removed
    }

    /// An empty graph with room for `capacity` vectors (it grows).
    public init(dimensions: Int, capacity: Int, seed: UInt64 = 100) throws(HNSWGraphError) {
        var made: OpaquePointer?
        let status = Self.withMessage { message, size in
            vshnsw_create(dimensions, max(1, capacity), Self.linksPerNode, Self.efConstruction, seed, &made, message, size)
        }
        guard status.code == VSHNSW_OK, let made else { throw HNSWGraphError(status) }
        handle = made
        self.dimensions = dimensions
    }

    /// Reads a saved graph, refusing it unless the file has `bytes` bytes
    /// with CRC-32 `crc` and a structure that holds (see CHNSWIndex.h).
    public init(loading path: String, dimensions: Int, bytes: UInt64, crc: UInt32, capacity: Int) throws(HNSWGraphError) {
        var made: OpaquePointer?
        let status = Self.withMessage { message, size in
            vshnsw_load(path, dimensions, bytes, crc, capacity, &made, message, size)
        }
        guard status.code == VSHNSW_OK, let made else { throw HNSWGraphError(status) }
        handle = made
        self.dimensions = dimensions
    }

    deinit { vshnsw_free(handle) }

    /// Vectors present (removed ones not counted).
    public var count: Int { vshnsw_count(handle) }
    /// Nodes, removed ones included (they keep their place until a rebuild).
    public var nodes: Int { vshnsw_nodes(handle) }
    /// Bytes the graph holds in memory, estimated from its sizes.
    public var memoryBytes: Int { vshnsw_memory_bytes(handle) }
    /// The distance kernel this CPU runs.
    public static var kernel: String { String(cString: vshnsw_kernel()) }

    /// Adds (or replaces) `labels.count` vectors, `vectors` holding them row
    /// after row, on `threads` threads; `progress(done, total)` is called now
    /// and then on the caller's thread and stops the add by returning false.
    public func add(labels: [Int64], vectors: UnsafeBufferPointer<Float>, threads: Int,
                    progress: ((Int, Int) -> Bool)? = nil) throws(HNSWGraphError) {
        precondition(vectors.count == labels.count * dimensions, "\(vectors.count) floats for \(labels.count) vectors of \(dimensions)")
        guard !labels.isEmpty, let base = vectors.baseAddress else { return }
        let box = ProgressBox(progress)
        let context = Unmanaged.passRetained(box)
        defer { context.release() }
        let callback: vshnsw_progress? = progress == nil ? nil : { context, done, total in
            guard let context else { return 0 }
            return Unmanaged<ProgressBox>.fromOpaque(context).takeUnretainedValue().report(done, total) ? 0 : 1
        }
        let status = labels.withUnsafeBufferPointer { labelBuffer in
            labelBuffer.withMemoryRebound(to: UInt64.self) { labels in
                Self.withMessage { message, size in
                    vshnsw_add(handle, labels.baseAddress, base, labels.count, max(1, threads), callback,
                               context.toOpaque(), message, size)
                }
            }
        }
        guard status.code == VSHNSW_OK else { throw HNSWGraphError(status) }
    }

    /// Marks labels removed; returns how many were present.
    @discardableResult
    public func remove(_ labels: [Int64]) -> Int {
        guard !labels.isEmpty else { return 0 }
        return labels.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: UInt64.self) { vshnsw_remove(handle, $0.baseAddress, $0.count) }
        }
    }

    /// Whether the graph holds `vector` (as it rounds it) under `label`.
    public func presence(of label: Int64, vector: UnsafePointer<Float>) -> Presence {
        switch vshnsw_compare(handle, UInt64(bitPattern: label), vector) {
        case VSHNSW_SAME: .same
        case VSHNSW_DIFFERENT: .different
        case VSHNSW_REMOVED: .removed
        default: .absent
        }
    }

    /// How many of `labels` the graph does not hold with their vector
    /// (`vectors` row after row, as the graph rounds them): absent, removed or
    /// holding another vector.
    public func mismatches(labels: UnsafeBufferPointer<Int64>, vectors: UnsafeBufferPointer<Float>) -> Int {
        precondition(vectors.count == labels.count * dimensions, "\(vectors.count) floats for \(labels.count) vectors of \(dimensions)")
        guard let base = vectors.baseAddress, !labels.isEmpty else { return 0 }
        return labels.withMemoryRebound(to: UInt64.self) { vshnsw_mismatches(handle, $0.baseAddress, base, $0.count) }
    }

    /// ``mismatches(labels:vectors:)`` for rows already rounded to the graph's `Int8`s
    /// (a ``QuantizedMatrix``'s rows): compared byte for byte, no rounding.
    public func mismatches(labels: UnsafeBufferPointer<Int64>, rounded values: UnsafeBufferPointer<Int8>) -> Int {
        precondition(values.count == labels.count * dimensions, "\(values.count) values for \(labels.count) vectors of \(dimensions)")
        guard let base = values.baseAddress, !labels.isEmpty else { return 0 }
        return labels.withMemoryRebound(to: UInt64.self) { vshnsw_mismatches_rounded(handle, $0.baseAddress, base, $0.count) }
    }

    /// Every label present, in no order.
    public func labels() -> [Int64] {
        let capacity = count
        guard capacity > 0 else { return [] }  // never the empty buffer: its initializer writes the shared empty storage (docs/fuzzing.md, TSan)
        return [Int64](unsafeUninitializedCapacity: capacity) { buffer, initialized in
            initialized = buffer.withMemoryRebound(to: UInt64.self) { vshnsw_labels(handle, $0.baseAddress, capacity) }
        }
    }

    /// The `ef` nearest labels to `query` as the graph finds them, nearest first.
    public func search(_ query: UnsafePointer<Float>, ef: Int) -> [Int64] {
        guard ef > 0 else { return [] }
        return [Int64](unsafeUninitializedCapacity: ef) { buffer, initialized in
            initialized = buffer.withMemoryRebound(to: UInt64.self) { vshnsw_search(handle, query, ef, $0.baseAddress, nil, ef) }
        }
    }

    /// Writes the graph to `path` (flushed to disk) and gives its size and CRC-32.
    public func save(to path: String) throws(HNSWGraphError) -> (bytes: UInt64, crc: UInt32) {
        var bytes: UInt64 = 0
        var crc: UInt32 = 0
        let status = Self.withMessage { message, size in vshnsw_save(handle, path, &bytes, &crc, message, size) }
        guard status.code == VSHNSW_OK else { throw HNSWGraphError(status) }
        return (bytes, crc)
    }

    /// Runs a C call with a message buffer; its status and message.
    static func withMessage(_ body: (UnsafeMutablePointer<CChar>, Int) -> vshnsw_status) -> (code: vshnsw_status, message: String) {
        var buffer = [CChar](repeating: 0, count: 256)
        let code = buffer.withUnsafeMutableBufferPointer { body($0.baseAddress!, $0.count) }
        let message = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        return (code, message)
    }

    /// The progress closure, handed to C as its context.
    final class ProgressBox {
        let body: ((Int, Int) -> Bool)?
        init(_ body: ((Int, Int) -> Bool)?) { self.body = body }
        func report(_ done: Int, _ total: Int) -> Bool { body?(done, total) ?? true }
    }
}

/// Why a graph could not be made, read, changed or written.
public struct HNSWGraphError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        case invalidArgument, noMemory, io, damaged, cancelled, failed
    }

    public var kind: Kind
    public var message: String

    init(_ status: (code: vshnsw_status, message: String)) {
        kind = switch status.code {
        case VSHNSW_INVALID_ARGUMENT: .invalidArgument
        case VSHNSW_NO_MEMORY: .noMemory
        case VSHNSW_IO: .io
        case VSHNSW_DAMAGED: .damaged
        case VSHNSW_CANCELLED: .cancelled
        default: .failed
        }
        message = status.message
    }

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
